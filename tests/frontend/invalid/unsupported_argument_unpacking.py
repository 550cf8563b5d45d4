# Tests: '*' in a call inside a kernel.
from numba import cuda


@cuda.jit(device=True)
def scale(a, b):
    return a * b


@cuda.jit("void(float32[::1])")
def use(x):
    x[0] = scale(*x)  # expect-error: argument unpacking with '*' is not supported in CUDA kernels
