# Tests: 'continue' used outside any loop.
from numba import cuda


@cuda.jit("void(float32[::1])")
def guard(x):
    i = cuda.grid(1)
    if i >= x.size:
        continue  # expect-error: 'continue' not properly in loop
    x[i] = 0
