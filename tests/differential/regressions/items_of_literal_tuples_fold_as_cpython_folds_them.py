# Found by the differential campaign (seed 900317: Kiln rejected a valid
# program), then reduced by hand. CPython folds an item of a literal tuple,
# `(-5, -0.0)[0]`, to the constant -5, so Numba prunes the branch that
# compares it with a local constant: the function never returns None, and
# np.int32 of its result needs no optional unwrapped.
import numpy as np
from numba import cuda


@cuda.jit(device=True)
def never_none(p0):
    p0 = -1099511627776
    if p0 == (-5, -0.0)[0]:
        return
    return p0


@cuda.jit(device=True)
def items(x):
    last = (1, 2.5, 7)[-1]
    flag = (True, False)[True]
    return x * last + (10 if flag else 20) + (3, 4)[1]


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
    out_i[t * 4 + 0] = np.int32(never_none(a_i64[t]))
    out_i[t * 4 + 1] = items(a_i64[t] % 100)
    out_f[t * 4 + 0] = (0.5, -1.25)[0] * a_f64[t]
