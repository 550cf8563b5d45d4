# Tests: a 'for' loop over an integer instead of range().
from numba import cuda


@cuda.jit("void(float32[::1])")
def zero(x):
    for i in x.size:  # expect-error: cannot iterate over int64
        x[i] = 0
