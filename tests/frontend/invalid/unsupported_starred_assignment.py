# Tests: a starred target in a tuple assignment.
from numba import cuda


@cuda.jit("void(int64[::1])")
def first_index(out):
    first, *rest = cuda.grid(3)  # expect-error: starred assignment targets are not supported in CUDA kernels
    out[0] = first
