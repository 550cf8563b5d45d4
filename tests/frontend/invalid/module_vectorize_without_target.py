# Tests: @vectorize without target='cuda' (a CPU ufunc).
from numba import vectorize


@vectorize(["float32(float32, float32)"])  # expect-error: Kiln compiles ufuncs for target='cuda' only
def add(x, y):
    return x + y
