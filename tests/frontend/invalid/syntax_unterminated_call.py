from numba import cuda


@cuda.jit("void(float32[:])")
def k(x):
    x[0] = max(1,  # expect-error: '(' was never closed
