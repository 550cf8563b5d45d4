"""Operations typed again after a loop widened their operands.

Numba's type variables only widen: `~x` is typed while `x` is still the
uint8 it started as (uint64), and again once the loop made it int64
(int64), and keeps both, which unify to float64. Numba's typing of this
module is in ../loop_widened_operations.json; test_examples_match_numba.py
checks that Kiln infers the same types.
"""
import numpy as np
from numba import cuda


@cuda.jit("void(int64[::1], int64[::1])")
def widened_by_a_loop(a, out):
    x = np.uint8(a[0])
    for i in range(a[1]):
        x ^= a[2] + i
    inverted = ~x
    negated = -x
    masked = x & np.uint8(3)
    shifted = x >> np.uint8(1)
    summed = x + 1
    out[0] = inverted
    out[1] = negated
    out[2] = masked
    out[3] = shifted
    out[4] = summed


@cuda.jit("void(float32[::1], int64[::1])")
def widened_from_float32(a, out):
    y = np.float32(a[0])
    for i in range(out[0]):
        y += a[i]
    halved = y * np.float32(0.5)
    out[1] = np.int64(halved)
