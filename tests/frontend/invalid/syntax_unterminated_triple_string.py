# Tests: a triple-quoted docstring that is never closed (reported where it starts).
from numba import cuda


@cuda.jit("void(float32[::1])")
def zero(x):
    """Set every element of x to zero.  # expect-error: unterminated triple-quoted string literal

    One thread per element.
    i = cuda.grid(1)
    if i < x.size:
        x[i] = 0
