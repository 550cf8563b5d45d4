# Tests: malformed UTF-8 in a comment; CPython rejects the whole file.
# expect-error@5: invalid UTF-8 byte in source
from numba import cuda

# café is Latin-1, not UTF-8


@cuda.jit("void(float32[::1])")
def zero(x):
    x[0] = 0
