# Tests: a generator expression passed to a builtin inside a kernel.
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_max(x, out):
    i = cuda.grid(1)
    out[i] = max(x[i, j] for j in range(x.shape[1]))  # expect-error: generator expressions are not supported in CUDA kernels
