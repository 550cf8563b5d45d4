# Tests: a kernel that returns a value.
from numba import cuda


@cuda.jit("void(float32[::1])")
def total(x):
    s = 0.0
    for i in range(x.size):
        s += x[i]
    return s  # expect-error: kernels cannot return a value, but this returns float64
