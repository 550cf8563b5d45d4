# Tests: assigning to a slice of an array (an array expression) inside a kernel.
from numba import cuda


@cuda.jit("void(float32[:, ::1])")
def clear_rows(x):
    i = cuda.grid(1)
    x[i, :] = 0  # expect-error: assigning to a slice of an array is not supported in CUDA kernels
