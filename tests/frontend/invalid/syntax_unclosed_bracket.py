# Tests: an opening parenthesis that is never closed, followed by more code.
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = (a[i] + b[i]  # expect-error: '(' was never closed


@cuda.jit("void(float32[::1])")
def zero(out):
    out[cuda.grid(1)] = 0
