"""vecmath's kernels: compiled by Kiln when the package is built; the package
ships the built module (kernels.cpython-*.so), not this file."""
from numba import cuda

SCALE = 2.0


@cuda.jit(["void(float32, float32[::1], float32[::1], float32[::1])",
           "void(float64, float64[::1], float64[::1], float64[::1])"])
def axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
