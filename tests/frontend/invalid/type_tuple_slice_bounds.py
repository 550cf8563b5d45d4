# Tests: slices of tuples need bounds known at compile time, and a step
# other than zero.
from numba import cuda


@cuda.jit("void(int64[::1], int64)")
def runtime_bound(out, n):
    t = (1, 2, 3)
    u = t[n:]  # expect-error: cannot index Tuple(Literal[int](1), Literal[int](2), Literal[int](3)) with a slice of int64
    out[0] = len(u)


@cuda.jit("void(int64[::1])")
def zero_step(out):
    t = (1, 2, 3)
    u = t[::0]  # expect-error: slice step cannot be zero
    out[0] = len(u)
