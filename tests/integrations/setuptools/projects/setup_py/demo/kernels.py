from numba import cuda, float32, float64, int32, void


@cuda.jit(void(float32, float32[::1], float32[::1], float32[::1]))
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit([void(int32[::1], int32), void(float64[::1], float64)])
def shift(values, amount):
    i = cuda.grid(1)
    if i < values.size:
        values[i] += amount


@cuda.jit(void(float32[:, ::1], float32[:, ::1]))
def transpose(src, dst):
    i, j = cuda.grid(2)
    if i < src.shape[0] and j < src.shape[1]:
        dst[j, i] = src[i, j]
