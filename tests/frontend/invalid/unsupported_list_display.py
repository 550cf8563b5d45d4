# Tests: a list display (list literal) inside a kernel.
from numba import cuda


@cuda.jit("void(float32[::1])")
def weights(x):
    i = cuda.grid(1)
    w = [0.25, 0.5, 0.25]  # expect-error: lists are not supported in CUDA kernels; use a tuple
    x[i] = w[i % 3]
