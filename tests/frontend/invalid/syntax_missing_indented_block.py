# Tests: an 'if' statement with no indented body.
from numba import cuda


@cuda.jit("void(float32[::1])")
def clamp(x):
    i = cuda.grid(1)
    if i < x.size:
    x[i] = max(x[i], 0)  # expect-error: expected an indented block after 'if' statement on line 8
