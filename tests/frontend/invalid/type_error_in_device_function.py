# Tests: a type error inside a device function, reached from a kernel; reported on the device function's line.
from numba import cuda


@cuda.jit(device=True)
def sample(a, t):
    pos = t * (a.shape[0] - 1)
    return a[pos]  # expect-error: cannot index array(float32, 1d, C) with float64


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def resample(a, ts, out):
    i = cuda.grid(1)
    out[i] = sample(a, ts[i])
