from numba import cuda


@cuda.jit("void(int32[::1], int32[::1])")
def square(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i]
