# Tests: assigning to an element of a tuple.
from numba import cuda


@cuda.jit("void(int64[::1])")
def shift(x):
    pos = cuda.grid(2)
    pos[0] = 0  # expect-error: tuples are immutable
    x[0] = pos[1]
