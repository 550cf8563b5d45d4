"""Root cause: a kernel made inside a function calls a jitted function that it
captures from that function's arguments, where the jitted function is a
staticmethod of a class (sarracen's GPUBackend._fast_2d, _fast_2d_line,
_fast_3d_line, ...: `@cuda.jit(fastmath=True) def _2d_func(...): ... wab =
weight_function(q, n_dims)`, with weight_function = CubicSplineKernel.w, an
`@staticmethod @njit` of sarracen/kernels). Numba-CUDA compiles the captured
dispatcher as a device function; Kiln refuses the free variable. (Capturing a
module-level @njit function works.)

    KILN_TARGET=cpu .venv/bin/python bench/packages/repros/closure_captures_jit_function.py

Seen (sarracen 1.4.1, every GPU test that interpolates):
    kiln._compiler.CompileError: .../sarracen/interpolate/gpu_backend.py:318:35:
    error: 'weight_function' is a variable of 'GPUBackend._fast_2d', which the
    module's host code makes when it runs; kernels can use literals, module
    constants, kernels and device functions, and of what host code computes
    at import, numbers, NumPy scalars, NumPy arrays of numbers and tuples of
    numbers
Here:
    .../closure_captures_jit_function.py:NN:20: error: 'weight_function' is a
    variable of 'apply', which the module's host code makes when it runs; ...
"""
import numpy as np
from numba import njit

from kiln import cuda


class CubicSpline:
    @staticmethod
    @njit(fastmath=True)
    def w(q):
        return 1.0 - q


def apply(weight_function, a):
    @cuda.jit(fastmath=True)
    def kernel(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = weight_function(a[i])

    kernel[1, 4](a)
    return a


print(apply(CubicSpline.w, np.linspace(0.0, 1.0, 4)))
