# Tests: a decorator followed by an assignment instead of a function definition.
from numba import cuda

@cuda.jit("void(float32[::1])")
THREADS = 128  # expect-error: a decorator must be followed by a function or class definition


@cuda.jit("void(float32[::1])")
def zero(x):
    x[cuda.grid(1)] = 0
