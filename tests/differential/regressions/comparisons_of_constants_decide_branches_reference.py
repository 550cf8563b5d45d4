# Numba's compiled semantics of comparisons_of_constants_decide_branches.py.
import numpy as np
from numba import njit


@njit
def pruned_ternary(p0):
    p0 = -18
    p0 = ((p0 % p0) if (-1099511627776 >= -5 != p0) else np.uint32(p0))
    p0 = ~p0
    return abs(p0)


@njit
def changed_by_loop(v):
    limit = 3
    for i in range(2):
        if limit < 1:
            v = 1.5
        limit = 5
    return v


@njit
def twice_assigned(v):
    limit = 7
    limit = 3
    if limit > 5:
        v = 1.5
    limit = 4
    return ~v


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    out_i[t * 4 + 0] = pruned_ternary(a_i64[t])
    out_f[t * 4 + 1] = changed_by_loop(a_i32[t])
    out_i[t * 4 + 1] = twice_assigned(a_i32[t])
