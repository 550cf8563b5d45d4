# Tests: bitwise '&' between a float and an int.
from numba import cuda


@cuda.jit("void(float32[::1], int32[::1])")
def low_bit(x, out):
    i = cuda.grid(1)
    out[i] = x[i] & 1  # expect-error: operator '&' is not supported between float32 and
