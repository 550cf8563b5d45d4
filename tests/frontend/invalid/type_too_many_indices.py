# Tests: a 1D array indexed with two indices.
from numba import cuda


@cuda.jit("void(float32[::1])")
def fill(x):
    i, j = cuda.grid(2)
    x[i, j] = 0  # expect-error: too many indices for array(float32, 1d, C): 2 given
