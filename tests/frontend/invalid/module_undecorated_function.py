# Tests: a plain (undecorated) helper function in a kernel module.
from numba import cuda


def clamp(v, lo, hi):  # expect-error: function 'clamp' has no decorator
    return min(max(v, lo), hi)


@cuda.jit("void(float32[::1])")
def saturate(x):
    i = cuda.grid(1)
    x[i] = min(max(x[i], 0.0), 1.0)
