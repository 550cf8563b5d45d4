# Tests: a function decorated with a Numba decorator that is not for CUDA (@numba.stencil).
import numba
from numba import cuda


@numba.stencil  # expect-error: Kiln does not know how to compile a function decorated with 'numba.stencil'
def smooth(a):
    return (a[-1] + a[0] + a[1]) / 3


@cuda.jit("void(float32[::1])")
def zero(x):
    x[cuda.grid(1)] = 0
