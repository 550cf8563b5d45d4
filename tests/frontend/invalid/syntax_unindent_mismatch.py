# Tests: a dedent to a column that matches no enclosing indentation level.
from numba import cuda


@cuda.jit("void(float32[::1], float32)")
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor
  x[0] = factor  # expect-error: unindent does not match any outer indentation level
