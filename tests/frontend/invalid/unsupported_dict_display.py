# Tests: a dict display (dict literal) inside a kernel.
from numba import cuda


@cuda.jit("void(int32[::1], float32[::1])")
def lookup(codes, out):
    i = cuda.grid(1)
    table = {0: 1.0, 1: 2.5}  # expect-error: dictionaries are not supported in CUDA kernels
    out[i] = table[codes[i]]
