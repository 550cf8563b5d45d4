# Tests: an f-string inside a kernel.
from numba import cuda


@cuda.jit("void(float32[::1])")
def show(x):
    i = cuda.grid(1)
    print(f"x[{i}] = {x[i]}")  # expect-error: f-strings are not supported in CUDA kernels
