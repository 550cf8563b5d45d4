"""Not a Kiln gap: a simulator divergence. `math.floor` of a float64 is a
float64 in Numba-CUDA's typing (numba.cuda.cudamath.Math_unary_with_fp16;
Kiln follows it, docs/language.md), so an array indexed by it does not
compile; Numba's simulator runs Python's math.floor, which gives an int, and
the kernel runs. sarracen's exact 2D interpolation kernel
(GPUBackend._fast_2d_exact, test_exact_interpolation[gpu]) indexes with
`ipixmin = math.floor(...)`: it passes on the simulator only.

    KILN_TARGET=cpu .venv/bin/python bench/packages/repros/math_floor_index_is_float.py

Numba-CUDA's own typing, without a GPU:
    from numba.cuda.descriptor import cuda_target; ctx = cuda_target.typing_context; ctx.refresh()
    ctx.resolve_function_type(ctx.resolve_value_type(math.floor), (types.float64,), {})
    -> (float64,) -> float64

Seen (sarracen 1.4.1):
    kiln._compiler.CompileError: .../sarracen/interpolate/gpu_backend.py:431:25:
    error: cannot index array(float64, 2d, C) with Tuple(int32, float64)
                            cuda.atomic.add(image, (jpix, ipixmin), term * wab)
Here:
    .../math_floor_index_is_float.py:35:9: error: cannot index array(float64,
    2d, C) with Tuple(Literal[int](0), float64)
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
