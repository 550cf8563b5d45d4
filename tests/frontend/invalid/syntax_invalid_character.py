# Tests: a non-ASCII operator character pasted into the source.
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def double(x, out):
    i = cuda.grid(1)
    out[i] = x[i] × 2  # expect-error: invalid character '×' (U+00D7)
