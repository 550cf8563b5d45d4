# Tests: an ASCII character that is not part of Python's syntax ('$').
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def copy(x, out):
    i = cuda.grid(1)
    out[i] = $x[i]  # expect-error: invalid character '$' (U+0024)
