# Tests: a math function called with the wrong number of arguments.
import math

from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def angles(x, y):
    i = cuda.grid(1)
    x[i] = math.atan(y[i], x[i])  # expect-error: no implementation of 'math.atan' accepts (float32, float32)
