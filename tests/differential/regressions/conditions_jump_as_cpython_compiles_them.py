# Found by the differential campaign (seed 4590: Kiln rejected a valid
# program), then reduced by hand. CPython compiles a condition as jumps: in
# `while c < 2 and not (True if True else False)` the second operand is a
# constant False, so the loop body is never compiled and Numba never types
# `p0 << 2` on a float. In a value, `False and y` is False and `True and y`
# is y, so y's type never merges with bool.
import numpy as np
from numba import cuda


@cuda.jit(device=True)
def dead_loop_body(p0):
    p0 = 1.5
    c = 0
    while c < 2 and (not (True if True else False)):
        c += 1
        p0 = p0 << 2
    return p0


@cuda.jit(device=True)
def constant_operands(y):
    x = False and y
    z = True and y
    return x + z


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
    out_f[t * 4 + 0] = dead_loop_body(a_i64[t])
    out_f[t * 4 + 1] = constant_operands(a_f32[t])
