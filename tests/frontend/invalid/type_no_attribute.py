# Tests: a misspelled array attribute.
from numba import cuda


@cuda.jit("void(float32[::1])")
def zero(x):
    i = cuda.grid(1)
    if i < x.lenght:  # expect-error: array(float32, 1d, C) has no attribute 'lenght'
        x[i] = 0
