# Tests: a variable read after 'del'; the error points at the read.
from numba import cuda


@cuda.jit("void(float32[::1])")
def clear(x):
    e = x[0]
    del e
    x[1] = 2
    x[0] = e  # expect-error: local variable 'e' is referenced before assignment
