import math

from numba import cuda, vectorize


@vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
def hypot(x, y):
    return math.sqrt(x * x + y * y)


@cuda.reduce
def total(a, b):
    return a + b
