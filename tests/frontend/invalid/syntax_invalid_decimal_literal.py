# Tests: a decimal literal immediately followed by letters.
from numba import cuda


@cuda.jit("void(float32[::1])")
def fill(x):
    i = cuda.grid(1)
    x[i] = 1abc  # expect-error: invalid number literal '1abc'
