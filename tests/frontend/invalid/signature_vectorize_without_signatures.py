# Tests: a CUDA @vectorize with no signature list.
from numba import vectorize


@vectorize(target="cuda")  # expect-error: @vectorize with target='cuda' needs a list of signatures
def add(x, y):
    return x + y
