# Tests: a set comprehension inside a kernel.
from numba import cuda


@cuda.jit("void(int32[:, ::1], int32[::1])")
def distinct_counts(x, out):
    i = cuda.grid(1)
    seen = {x[i, j] for j in range(x.shape[1])}  # expect-error: set comprehensions are not supported in CUDA kernels
    out[i] = len(seen)
