# Tests: ordering comparison between complex numbers.
from numba import cuda


@cuda.jit("void(complex128[::1], complex128[::1], int32[::1])")
def less(a, b, out):
    i = cuda.grid(1)
    if a[i] < b[i]:  # expect-error: operator '<' is not supported between complex128 and complex128
        out[i] = 1
