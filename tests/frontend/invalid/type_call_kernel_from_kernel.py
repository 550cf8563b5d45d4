# Tests: a kernel calling another kernel (which is not a device function).
from numba import cuda


@cuda.jit("void(float32[::1])")
def zero(x):
    x[cuda.grid(1)] = 0


@cuda.jit("void(float32[::1], float32[::1])")
def zero_both(x, y):
    zero(x)  # expect-error: kernel 'zero' cannot be called from device code
    y[cuda.grid(1)] = 0
