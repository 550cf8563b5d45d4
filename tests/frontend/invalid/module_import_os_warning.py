# Tests: 'import os' is only a warning; the list display in the kernel makes the module invalid.
import os  # expect-warning: import of 'os' is ignored: kernels can use only math, cmath, numpy, numba, kiln and cffi

from numba import cuda


@cuda.jit("void(float32[::1])")
def smooth(x):
    i = cuda.grid(1)
    w = [0.25, 0.5, 0.25]  # expect-error: lists are not supported in CUDA kernels
    x[i] *= w[1]
