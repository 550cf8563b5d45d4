# Tests: a statement that ends in the middle of a binary expression.
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def add(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] +  # expect-error: expected an expression
