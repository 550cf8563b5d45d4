# Tests: a 'nonlocal' declaration inside a kernel.
from numba import cuda


@cuda.jit("void(int32[::1])")
def count(x):
    nonlocal total  # expect-error: 'nonlocal' declarations are not supported in CUDA kernels
    total = x.size
    x[0] = total
