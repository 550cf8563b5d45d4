# Tests: a single-quoted string literal that runs to the end of the line.
from numba import cuda


@cuda.jit("void(float32[::1])")
def report(x):
    i = cuda.grid(1)
    if i == 0:
        print("first element:, x[0])  # expect-error: unterminated string literal
