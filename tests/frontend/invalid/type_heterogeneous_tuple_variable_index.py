# Tests: a tuple of mixed types indexed with a run-time value.
from numba import cuda


@cuda.jit("void(float64[::1])")
def pick(x):
    i = cuda.grid(1)
    params = (1, 2.5)
    x[i] = params[i % 2]  # expect-error: can only be indexed with a constant, since its elements have different types
