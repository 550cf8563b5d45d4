# Tests: a class defined inside a kernel.
from numba import cuda


@cuda.jit("void(float32[::1])")
def fill(x):
    class Accumulator:  # expect-error: class definitions are not supported in CUDA kernels
        total = 0.0

    x[cuda.grid(1)] = 1
