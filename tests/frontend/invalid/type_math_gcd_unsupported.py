# Tests: math.gcd, which Numba does not support on the CUDA target.
import math

from numba import cuda


@cuda.jit("void(int64[::1], int64[::1], int64[::1])")
def gcds(a, b, out):
    i = cuda.grid(1)
    out[i] = math.gcd(a[i], b[i])  # expect-error: 'math.gcd' is not supported in CUDA kernels
