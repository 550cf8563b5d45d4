# Tests: a CUDA ufunc signature without a return type.
from numba import vectorize


@vectorize(["(float32, float32)"], target="cuda")  # expect-error: ufunc signatures need a return type
def add(x, y):
    return x + y
