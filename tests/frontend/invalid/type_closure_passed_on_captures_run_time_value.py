# Tests: a function passed on may capture only constants, as in Numba; called
# where it is defined, it reads any variable.
from numba import cuda


@cuda.jit(device=True)
def consumer(func, v):
    return func(v)  # expect-error: 'shift' is called here as a value passed on, and it captures 'offset', whose value is known only at run time


@cuda.jit("void(float32[::1], float32)")
def use(x, offset):
    def shift(v):
        return v + offset

    x[0] = shift(x[0])
    x[1] = consumer(shift, x[1])
