# Tests: an assignment whose target is a function call.
from numba import cuda


@cuda.jit("void(float32[::1])")
def fill(x):
    cuda.grid(1) = 0  # expect-error: cannot assign to function call
    x[0] = 1
