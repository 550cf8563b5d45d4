# Tests: a device function that is a generator ('yield').
from numba import cuda


@cuda.jit(device=True)
def indices(n):
    for i in range(n):
        yield i  # expect-error: generators ('yield') are not supported in CUDA kernels


@cuda.jit("void(int32[::1])")
def fill(x):
    for i in indices(x.size):
        x[i] = i
