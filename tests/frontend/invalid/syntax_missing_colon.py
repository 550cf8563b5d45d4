# Tests: an 'if' statement whose header is missing the trailing colon.
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def copy(src, dst):
    i = cuda.grid(1)
    if i < src.size  # expect-error: expected ':'
        dst[i] = src[i]
