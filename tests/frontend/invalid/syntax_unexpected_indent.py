# Tests: a statement indented deeper than the block it belongs to.
from numba import cuda


@cuda.jit("void(float32[::1], float32)")
def scale(x, factor):
    i = cuda.grid(1)
        x[i] *= factor  # expect-error: unexpected indent
