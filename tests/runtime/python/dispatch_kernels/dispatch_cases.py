"""Kernels for tests/runtime/python/test_dispatch.py: several signatures per
kernel, every layout, scalars of each kind, dynamic shared memory."""

from numba import cuda, float32


@cuda.jit(["void(float32[::1], float32, int32)", "void(float64[::1], float64, int64)"])
def scale(out, factor, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = out[i] * factor


@cuda.jit("void(float32[:], float32[:])")
def copy_any(src, dst):
    i = cuda.grid(1)
    if i < src.shape[0]:
        dst[i] = src[i]


@cuda.jit("void(float32[:, ::1], float32)")
def fill_c(out, value):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = value + i * 100 + j


@cuda.jit("void(float32[::1, :], float32)")
def fill_f(out, value):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = value + i * 100 + j


@cuda.jit("void(complex128[::1], complex128)")
def add_complex(out, z):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] += z


@cuda.jit("void(int64[::1], boolean, uint8, float16)")
def flags(out, flag, small, half):
    i = cuda.grid(1)
    if i == 0:
        out[0] = 1 if flag else 0
        out[1] = small
        out[2] = int(half * 4)


@cuda.jit("void(float32[::1])")
def reverse_block(data):
    buffer = cuda.shared.array(0, dtype=float32)
    i = cuda.threadIdx.x
    buffer[i] = data[i]
    cuda.syncthreads()
    data[i] = buffer[cuda.blockDim.x - 1 - i]


THRESHOLD = 3
NAME = "dispatch"
RATIO = 0.5
