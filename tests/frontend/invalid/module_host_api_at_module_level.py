# Tests: a module constant computed with a host-only CUDA API.
import numpy as np
from numba import cuda

BUFFER = cuda.device_array(1024, dtype=np.float32)  # expect-error: runs on the host and cannot be called in a kernel module


@cuda.jit("void(float32[::1])")
def zero(x):
    x[cuda.grid(1)] = 0
