# Tests: a 'global' declaration inside a kernel.
from numba import cuda

COUNTER = 0


@cuda.jit("void(int32[::1])")
def count(x):
    global COUNTER  # expect-error: 'global' declarations are not supported in CUDA kernels
    COUNTER += 1
    x[0] = COUNTER
