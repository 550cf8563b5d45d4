# Tests: a dict comprehension inside a kernel.
from numba import cuda


@cuda.jit("void(int32[::1], int32[::1])")
def lookup(keys, out):
    i = cuda.grid(1)
    table = {k: k * k for k in range(16)}  # expect-error: dict comprehensions are not supported in CUDA kernels
    out[i] = table[keys[i]]
