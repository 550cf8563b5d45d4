# Found by the differential campaign (seed 885055: Kiln rejected a valid
# program), then reduced by hand. CPython threads the jumps of an operand of
# the same kind that always short-circuits: in `a and (b and (not True)) and
# c`, every path of the middle operand ends falsy, so `c` is never compiled
# and Numba never types the device function whose constant overflows int64.
import numpy as np
from numba import cuda


@cuda.jit(device=True)
def overflowing(p1):
    p1 = min(((--1099511627776) << ((-5) & 31)), 1)
    return p1


@cuda.jit(device=True)
def operands(x):
    never = (x > 0) and ((x < 5) and (not True)) and (overflowing(x) != 0)
    always = (x > 0) or ((x < 5) or (not False)) or (overflowing(x) != 0)
    kept = (x > 0) and ((x < 5) and True) and (x + 10)
    return never + always * 2 + kept * 4


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
    out_i[t * 4 + 0] = operands(a_i64[t] % 8)
