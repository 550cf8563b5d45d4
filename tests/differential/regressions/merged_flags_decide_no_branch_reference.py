# Numba's compiled semantics of merged_flags_decide_no_branch.py.
import numpy as np
from numba import njit

DEBUG = False


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    flag = a_i64[t % 16] < -7
    c = 0
    while c < 2:
        c += 1
        flag = True
    v0 = a_i8[t % 16] if flag else 1
    out_i[t * 4 + 0] = v0
    out_i[t * 4 + 1] = (1, 1, v0)[t % 3]
    kept = True
    for i in range(2):
        if DEBUG:
            kept = False
    v1 = a_i8[t % 16] if kept else t
    out_i[t * 4 + 2] = v1 + np.int8(100)
    out_i[t * 4 + 3] = flag
