# Tests: a set display (set literal) inside a kernel.
from numba import cuda


@cuda.jit("void(int32[::1], int32[::1])")
def prime_count(x, out):
    i = cuda.grid(1)
    primes = {2, 3, 5, 7}  # expect-error: sets are not supported in CUDA kernels
    out[i] = len(primes)
