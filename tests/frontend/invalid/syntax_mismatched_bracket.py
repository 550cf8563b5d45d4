# Tests: a subscript opened with '[' but closed with ')'.
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def copy2d(src, dst):
    i, j = cuda.grid(2)
    dst[i, j] = src[i, j)  # expect-error: closing parenthesis ')' does not match opening parenthesis '['
