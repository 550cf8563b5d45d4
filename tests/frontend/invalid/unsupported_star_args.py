# Tests: a device function with a *args parameter.
from numba import cuda


@cuda.jit(device=True)
def total(*values):  # expect-error: 'total' cannot take *args, **kwargs or keyword-only parameters
    s = 0.0
    for v in values:
        s += v
    return s


@cuda.jit("void(float32[::1])")
def fill(x):
    x[0] = total(1.0, 2.0)
