# Tests: an import statement inside a kernel.
from numba import cuda


@cuda.jit("void(float32[::1])")
def roots(x):
    import math  # expect-error: imports inside kernels are not supported; import at module level

    i = cuda.grid(1)
    x[i] = math.sqrt(x[i])
