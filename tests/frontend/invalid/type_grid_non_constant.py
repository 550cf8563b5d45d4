# Tests: cuda.grid() with a dimension that is not a compile-time constant.
from numba import cuda


@cuda.jit("void(float32[::1], int64)")
def fill(x, ndim):
    i = cuda.grid(ndim)  # expect-error: must be the constant 1, 2 or 3
    x[i] = 0
