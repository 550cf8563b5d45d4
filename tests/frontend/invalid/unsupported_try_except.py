# Tests: a try/except statement inside a kernel.
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def safe_reciprocal(x, out):
    i = cuda.grid(1)
    try:  # expect-error: 'try' statements are not supported in CUDA kernels
        out[i] = 1 / x[i]
    except ZeroDivisionError:
        out[i] = 0
