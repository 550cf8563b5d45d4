# Tests: malformed UTF-8 in a string literal.
from numba import cuda


@cuda.jit("void(float32[::1])")
def hello(x):
    print("ÿ")  # expect-error: invalid UTF-8 byte in source
