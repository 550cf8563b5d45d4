from numba import cuda

SCALE = 2.0


@cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit("void(float64[::1], float64[::1])")
def scale(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * SCALE
