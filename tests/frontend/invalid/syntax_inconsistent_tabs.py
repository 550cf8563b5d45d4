# Tests: a block indented with spaces on one line and a tab on the next.
from numba import cuda


@cuda.jit("void(float32[::1], float32)")
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        y = x[i] * factor
	x[i] = y  # expect-error: inconsistent use of tabs and spaces in indentation
