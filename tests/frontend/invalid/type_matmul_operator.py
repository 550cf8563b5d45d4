# Tests: the matrix multiplication operator '@' inside a kernel.
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
def matmul(a, b, c):
    c[0, 0] = (a @ b)[0, 0]  # expect-error: operator '@' is not supported in CUDA kernels
