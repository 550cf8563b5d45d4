# Numba's compiled semantics of literal_tuple_items_decide_branches.py.
import numpy as np
from numba import njit


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    v1 = np.int64(np.int32(a_i32[t % 16]))
    v2 = a_i32[t % 16] < 11
    v3, v2 = (t, True)
    v1 = -(np.uint8(v1) if v2 else t)
    out_i[t * 3 + 0] = v1
    out_i[t * 3 + 1] = v2
    count, off = (2, 0)
    out_i[t * 3 + 2] = (np.uint8(200) if count else t) + (np.uint8(100) if off else np.uint8(100))
