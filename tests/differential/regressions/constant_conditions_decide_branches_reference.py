# Numba's compiled semantics of constant_conditions_decide_branches.py.
import numpy as np
from numba import njit


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    x = a_u16[t]
    if False:
        x = 1
    out_i[t * 4 + 0] = ~x
    y = 1 if False else a_u16[t]
    out_i[t * 4 + 1] = ~y
    z = a_u16[t] if True else 1
    out_i[t * 4 + 2] = ~z
    w = 1 if not True else a_u16[t]
    out_i[t * 4 + 3] = ~w
