# Tests: argument counts are written in the singular where it applies.
from numba import cuda


@cuda.jit(device=True)
def ident(a):
    return a


@cuda.jit("(float32,)")  # expect-error: signature has 1 argument but 'pair' takes 2
def pair(x, y):
    pass


@cuda.jit("void(float32[::1])")
def use(x):
    x[0] = ident(x[0], 1)  # expect-error: 'ident' takes 1 argument (2 given)
    (a,) = cuda.grid(2)  # expect-error: cannot unpack UniTuple(int64 x 2) into 1 value
