# Tests: a call with a positional argument after a keyword argument.
from numba import cuda


@cuda.jit("void(int32[::1])")
def count(counter):
    cuda.atomic.add(ary=counter, 0, 1)  # expect-error: positional argument follows keyword argument
