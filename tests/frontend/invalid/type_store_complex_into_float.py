# Tests: storing a complex value into a float32 array.
from numba import cuda


@cuda.jit("void(float32[::1])")
def rotate(x):
    i = cuda.grid(1)
    x[i] = x[i] * 1j  # expect-error: cannot store complex128 into array(float32, 1d, C)
