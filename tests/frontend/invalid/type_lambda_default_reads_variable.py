# Tests: the default value of a lambda inside a kernel must be a constant,
# as for any function defined there.
from numba import cuda


@cuda.jit("void(float32[::1])")
def square(x):
    i = cuda.grid(1)
    power = 2
    f = lambda v, p=power: v**p  # expect-error: a default value reads 'power', a variable of 'square'; the defaults of a function defined inside a kernel or device function must be constants
    x[i] = f(x[i])
