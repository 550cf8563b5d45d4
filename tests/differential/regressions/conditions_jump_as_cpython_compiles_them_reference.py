# Numba's compiled semantics of conditions_jump_as_cpython_compiles_them.py.
import numpy as np
from numba import njit


@njit
def dead_loop_body(p0):
    p0 = 1.5
    c = 0
    while c < 2 and (not (True if True else False)):
        c += 1
        p0 = p0 << 2
    return p0


@njit
def constant_operands(y):
    x = False and y
    z = True and y
    return x + z


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    out_f[t * 4 + 0] = dead_loop_body(a_i64[t])
    out_f[t * 4 + 1] = constant_operands(a_f32[t])
