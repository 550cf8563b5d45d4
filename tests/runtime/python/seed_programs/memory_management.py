"""Kernels of the course's "Memory Management" slides (session 1), with the
signatures Numba infers for the host code there: ``x = np.arange(10)`` is
int64 on Linux."""

from numba import cuda


@cuda.jit("void(int64[::1], int64[::1], int64[::1])")
def add(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = x[i] + y[i]
