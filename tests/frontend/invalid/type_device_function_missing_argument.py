# Tests: a device function called with too few arguments.
from numba import cuda


@cuda.jit(device=True)
def lerp(a, b, t):
    return a + (b - a) * t


@cuda.jit("void(float32[::1], float32[::1])")
def blend(x, y):
    i = cuda.grid(1)
    x[i] = lerp(x[i], y[i])  # expect-error: 'lerp' is missing the argument 't'
