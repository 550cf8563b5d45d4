# Tests: '*' in a call unpacks tuples only, into the arguments of calls
# that take them as written.
from numba import cuda


@cuda.jit(device=True)
def scale(a, b):
    return a * b


@cuda.jit("void(float32[::1], UniTuple(int64, 2))")
def use(x, t):
    x[0] = scale(*x)  # expect-error: '*' unpacks a tuple into arguments, not array(float32, 1d, C)
    print(*t)  # expect-error: argument unpacking with '*' is supported in calls of device functions, number types and Python's and math's functions, not of print
    cuda.atomic.add(x, *t)  # expect-error: argument unpacking with '*' is supported in calls of device functions, number types and Python's and math's functions, not of cuda.atomic.add
    x[1] = scale(*t, 2.0)  # expect-error: 'scale' takes 2 arguments (3 given)
