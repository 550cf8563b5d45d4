# Tests: a lambda expression inside a kernel.
from numba import cuda


@cuda.jit("void(float32[::1])")
def square(x):
    i = cuda.grid(1)
    f = lambda v: v * v  # expect-error: lambdas are not supported in CUDA kernels
    x[i] = f(x[i])
