# Tests: raising a builtin exception class Kiln does not support.
from numba import cuda


@cuda.jit("void(float32[::1])")
def stop(x):
    if x[0] > 0:
        raise StopIteration  # expect-error: 'StopIteration' is not supported in CUDA kernels
    raise AttributeError("no")  # expect-error: 'AttributeError' is not supported in CUDA kernels
