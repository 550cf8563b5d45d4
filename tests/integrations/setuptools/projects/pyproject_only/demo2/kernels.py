from numba import cuda, float64, int64, void

SCALE = 3


@cuda.jit(void(float64[::1], float64[::1]))
def cube(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i] * x[i]


@cuda.jit(void(int64[::1], int64[::1]))
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i] % bins.size, SCALE)
