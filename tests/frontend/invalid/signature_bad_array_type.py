# Tests: an array type written with an integer instead of a slice ('float32[:,1]').
from numba import cuda


@cuda.jit("void(float32[:,1])")  # expect-error: array types are written with slices without start or stop
def zero(x):
    i, j = cuda.grid(2)
    x[i, j] = 0
