# Tests: a local variable read before it is assigned.
from numba import cuda


@cuda.jit("void(float32[::1])")
def prefix(x):
    for i in range(x.size):
        total += x[i]  # expect-error: local variable 'total' is referenced before assignment
        x[i] = total
    total = 0.0
