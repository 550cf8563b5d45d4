# Tests: a NumPy scalar type used to build an array type in a signature expression.
import numpy as np
from numba import cuda, void


@cuda.jit(void(np.float32[::1]))  # expect-error: is a NumPy type and cannot make an array type
def zero(x):
    x[cuda.grid(1)] = 0
