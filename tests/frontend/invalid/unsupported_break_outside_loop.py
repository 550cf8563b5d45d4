# Tests: 'break' used outside any loop (as if it could leave an 'if').
from numba import cuda


@cuda.jit("void(float32[::1])")
def guard(x):
    i = cuda.grid(1)
    if i >= x.size:
        break  # expect-error: 'break' outside loop
    x[i] = 0
