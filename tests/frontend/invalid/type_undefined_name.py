# Tests: calling a function that is not defined anywhere.
from numba import cuda


@cuda.jit("void(float32[::1])")
def smooth(x):
    i = cuda.grid(1)
    x[i] = clamp(x[i], 0.0, 1.0)  # expect-error: name 'clamp' is not defined
