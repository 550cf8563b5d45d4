# Tests: the course's unification error: 'x' is an int on one branch and an array on the other.
from numba import cuda


@cuda.jit("void(int32[::1])")
def add_10(x):
    for i in range(10):
        if i == 8:
            x = 10
        else:
            x[0] = 10  # expect-error: cannot unify Literal[int](10) and array(int32, 1d, C) for 'x'
