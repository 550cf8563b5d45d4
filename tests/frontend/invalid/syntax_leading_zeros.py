# Tests: a decimal integer literal with leading zeros (Python 2 octal style).
from numba import cuda


@cuda.jit("void(int32[::1])")
def permissions(x):
    i = cuda.grid(1)
    x[i] = 0755  # expect-error: leading zeros in decimal integer literals are not permitted
