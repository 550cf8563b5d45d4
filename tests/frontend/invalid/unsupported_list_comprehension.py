# Tests: a list comprehension inside a kernel.
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def first_column(x, out):
    i = cuda.grid(1)
    row = [x[i, j] for j in range(x.shape[1])]  # expect-error: list comprehensions are not supported in CUDA kernels
    out[i] = row[0]
