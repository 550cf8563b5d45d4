# Tests: a 'with' statement inside a kernel.
from numba import cuda


@cuda.jit("void(float32[::1])")
def zero(x):
    with cuda.defer_cleanup():  # expect-error: 'with' statements are not supported in CUDA kernels
        x[cuda.grid(1)] = 0
