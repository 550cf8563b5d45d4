# Tests: an assignment whose target is a literal.
from numba import cuda


@cuda.jit("void(float32[::1])")
def fill(x):
    i = cuda.grid(1)
    1.0 = x[i]  # expect-error: cannot assign to literal
