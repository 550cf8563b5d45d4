# Tests: a closing bracket with no opening bracket.
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def copy(src, dst):
    i = cuda.grid(1)
    dst[i] = src[i]]  # expect-error: unmatched ']'
