from numba import cuda, float32, void


@cuda.jit(void(float32[::1], float32[::1]))
def add_none(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + None
