# Tests: an array indexed with a float.
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def downsample(x, out):
    i = cuda.grid(1)
    out[i] = x[i / 2]  # expect-error: cannot index array(float32, 1d, C) with float64
