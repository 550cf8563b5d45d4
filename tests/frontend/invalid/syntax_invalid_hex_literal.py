# Tests: a hexadecimal prefix with no digits after it.
from numba import cuda


@cuda.jit("void(uint32[::1])")
def mask(x):
    i = cuda.grid(1)
    x[i] = x[i] & 0x  # expect-error: invalid number literal '0x'
