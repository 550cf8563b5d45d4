"""Constructs that Numba accepts and Kiln once rejected.

Numba's typing of this module is in ../numba_compatibility.json;
test_examples_match_numba.py checks that Kiln infers the same types.
"""
import math

from numba import cuda
from numba.core import types

# math.log with a base, evaluated when the module is compiled.
LOG8 = math.log(8, 2)
# A global tuple of integer literals: Tuple(Literal[int](1), ...) in Numba.
STEPS = (1, 2, 3)


@cuda.jit(device=True)
def offset(a, b=2, scale=1.5):
    """Default values: a call may leave b and scale out."""
    return a * scale + b


@cuda.jit((types.float32[::1], types.int64), shared_memory_carveout="MaxShared")
def literal_tuples(x, n):
    # (1, 2, 3) counts as UniTuple(int64 x 3) for loops and run-time indices.
    t = (1, 2, 3)
    s = 0
    for v in t:
        s += v
    for w in STEPS:
        s += w
    x[0] = s + t[n] + STEPS[n] + LOG8
    x[1] = offset(x[0])
    x[2] = offset(x[0], 3)
    x[3] = offset(x[0], scale=2.5)


@cuda.vectorize(["float32(float32)", "float64(float64)"])
def twice(x):
    # numba.cuda.vectorize compiles for target='cuda' by default.
    return x * 2
