# Tests: a kernel signature with a non-void return type.
from numba import cuda


@cuda.jit("float32(float32[::1])")  # expect-error: kernel signatures must return void, not float32
def first(x):
    x[0] = 1
