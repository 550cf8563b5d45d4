# Tests: a function defined inside a kernel.
from numba import cuda


@cuda.jit("void(float32[::1])")
def square(x):
    def sq(v):  # expect-error: functions cannot be defined inside kernels or device functions
        return v * v

    i = cuda.grid(1)
    x[i] = sq(x[i])
