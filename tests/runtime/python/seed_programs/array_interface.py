"""Kernels of the session 3 notebook, "CUDA Array Interface": a grid-strided
add over ``cupy.arange(10)`` (int64), ``add_one`` over a device copy of
``np.arange(10)`` and ``initialize`` over a float32 ``MyFloatArray``."""

from numba import cuda


@cuda.jit("void(int64[:], int64[:], int64[:])")
def add(x, y, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        out[i] = x[i] + y[i]


@cuda.jit("void(int64[:])")
def add_one(x):
    i = cuda.grid(1)
    if i < len(x):
        x[i] += 1


@cuda.jit("void(float32[:])")
def initialize(x):
    i = cuda.grid(1)
    if i < len(x):
        x[i] = 3.14
