# Tests: the builtin str(), which CUDA kernels cannot use (no string objects on the GPU).
from numba import cuda


@cuda.jit("void(float32[::1])")
def show(x):
    i = cuda.grid(1)
    print("x = " + str(x[i]))  # expect-error: 'str' is not supported in CUDA kernels
