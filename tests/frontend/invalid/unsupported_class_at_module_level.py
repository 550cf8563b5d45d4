# Tests: a class defined at module level in a kernel module.
from numba import cuda


class Point:  # expect-error: class 'Point' cannot be defined in a kernel module
    def __init__(self, x, y):
        self.x = x
        self.y = y


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def norm(xs, ys, out):
    i = cuda.grid(1)
    out[i] = (xs[i] ** 2 + ys[i] ** 2) ** 0.5
