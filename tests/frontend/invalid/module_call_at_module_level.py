# Tests: a bare function call (an expression statement) at module level.
from numba import cuda

print("loading kernels")  # expect-error: this statement cannot be in a kernel module


@cuda.jit("void(float32[::1])")
def zero(x):
    x[cuda.grid(1)] = 0
