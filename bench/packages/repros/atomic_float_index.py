"""Root cause: an atomic operation indexed with a float. `math.floor` of a
float64 is a float64 on the GPU (numba.cuda.cudamath), and sarracen's exact
2D interpolation kernel (GPUBackend._fast_2d_exact,
test_exact_interpolation[gpu]) indexes `cuda.atomic.add(image, (jpix,
ipixmin), ...)` with `ipixmin = math.floor(...)`. Numba-CUDA compiles it:
its atomics cast every index to intp (numba.cuda.api_util.normalize_indices,
a float truncating), where indexing with `[]` refuses a float. Kiln once
refused it as `[]` does; it casts as Numba does now.

    KILN_TARGET=cpu .venv/bin/python bench/packages/repros/atomic_float_index.py

Numba-CUDA, without a GPU:
    cuda.compile_ptx(count, (float64[::1], float64[:, ::1]), cc=(8, 0))
    -> compiles; the index is cvt.rzi.s64.f64

Seen (sarracen 1.4.1):
    kiln._compiler.CompileError: .../sarracen/interpolate/gpu_backend.py:431:25:
    error: cannot index array(float64, 2d, C) with Tuple(int32, float64)
                            cuda.atomic.add(image, (jpix, ipixmin), term * wab)
"""
import math

import numpy as np

from kiln import cuda


@cuda.jit
def count(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, (0, math.floor(x[i])), 1.0)


out = np.zeros((1, 4))
count[1, 4](np.array([0.5, 1.5, 2.5, 3.5]), out)
print(out)
