# Numba's compiled semantics of items_of_literal_tuples_fold_as_cpython_folds_them.py.
import numpy as np
from numba import njit


@njit
def never_none(p0):
    p0 = -1099511627776
    if p0 == (-5, -0.0)[0]:
        return
    return p0


@njit
def items(x):
    last = (1, 2.5, 7)[-1]
    flag = (True, False)[True]
    return x * last + (10 if flag else 20) + (3, 4)[1]


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    out_i[t * 4 + 0] = np.int32(never_none(a_i64[t]))
    out_i[t * 4 + 1] = items(a_i64[t] % 100)
    out_f[t * 4 + 0] = (0.5, -1.25)[0] * a_f64[t]
