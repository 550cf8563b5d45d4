# Tests: a signature string with fewer argument types than the kernel has parameters.
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")  # expect-error: signature has 2 arguments but 'add' takes 3
def add(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]
