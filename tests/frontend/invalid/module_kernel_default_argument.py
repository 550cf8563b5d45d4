# Tests: a kernel parameter with a default value.
from numba import cuda


@cuda.jit("void(float32[::1], float32)")
def fill(x, value=0.0):  # expect-error: parameter 'value' of a kernel cannot have a default value
    x[cuda.grid(1)] = value
