# Tests: a bare 'raise' (re-raise) with no exception being handled.
from numba import cuda


@cuda.jit("void(float32[::1])")
def check(x):
    i = cuda.grid(1)
    if x[i] < 0:
        raise  # expect-error: a bare 'raise' has no exception to re-raise in a CUDA kernel
    x[i] = x[i] ** 0.5
