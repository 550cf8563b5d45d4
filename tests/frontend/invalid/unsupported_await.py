# Tests: an 'await' expression inside a kernel.
from numba import cuda


@cuda.jit(device=True)
def load(x, i):
    return x[i]


@cuda.jit("void(float32[::1], float32[::1])")
def copy(src, dst):
    i = cuda.grid(1)
    dst[i] = await load(src, i)  # expect-error: 'await' expressions are not supported in CUDA kernels
