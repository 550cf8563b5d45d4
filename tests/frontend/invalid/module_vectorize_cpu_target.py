# Tests: @vectorize with an explicit non-CUDA target.
from numba import vectorize


@vectorize(["float32(float32, float32)"], target="parallel")  # expect-error: Kiln compiles ufuncs for target='cuda' only
def add(x, y):
    return x + y
