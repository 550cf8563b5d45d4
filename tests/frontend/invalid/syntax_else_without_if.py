# Tests: an 'else' clause with no 'if' before it.
from numba import cuda


@cuda.jit("void(float32[::1])")
def clamp(x):
    i = cuda.grid(1)
    x[i] = max(x[i], 0)
    else:  # expect-error: 'else' without a matching statement
        x[i] = 0
