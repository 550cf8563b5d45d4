# Tests: a function defined inside a kernel or device function is compiled
# by itself: no decorator, one name, no recursion.
from numba import cuda


@cuda.jit("void(float32[::1])")
def decorated(x):
    @cuda.jit(device=True)  # expect-error: 'sq' is defined inside a kernel or device function and decorated
    def sq(v):
        return v * v

    x[0] = sq(x[0])


@cuda.jit("void(float32[::1])")
def rebound(x):
    def half(v):  # expect-error: 'half' names a function defined inside 'rebound' and is bound again there
        return v / 2

    half = 3
    x[0] = half


@cuda.jit("void(float32[::1])")
def recursive(x):
    def countdown(n):  # expect-error: 'countdown' is defined inside a kernel or device function and calls itself
        return 0 if n == 0 else countdown(n - 1)

    x[0] = countdown(3)


@cuda.jit("void(float32[::1], float32)")
def shadows_parameter(x, scale):
    def scale(v):  # expect-error: 'scale' names a function defined inside 'shadows_parameter' and is bound again there
        return v

    x[0] = scale(x[0])


@cuda.jit("void(float32[::1], float32)")
def default_reads_variable(x, offset):
    def shift(v, by=offset):  # expect-error: a default value reads 'offset', a variable of 'default_reads_variable'
        return v + by

    x[0] = shift(x[0])


@cuda.jit("void(float32[::1])")
def mutually_recursive(x):
    def ping(n):
        return 0 if n == 0 else pong(n - 1)

    def pong(n):
        return 1 if n == 0 else ping(n - 1)

    x[0] = ping(3)  # expect-error: 'ping' is defined inside a kernel or device function and calls itself
