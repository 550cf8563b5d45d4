# Numba's compiled semantics of while_loops_test_first_as_cpython_compiles_them.py.
import numpy as np
from numba import njit


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    v = np.int64(a_i64[t % 16])
    c = 0
    while c < 5 and True:
        c += 1
        v = np.uint16(100)
    out_f[t * 3 + 0] = 1.5 + (-v)
    w = np.int64(a_i64[t % 16])
    d = 0
    while d < 3:
        d += 1
        w = np.uint8(7)
    out_f[t * 3 + 1] = 0.5 + (-w)
    u = np.int64(a_i64[t % 16])
    e = 0
    while e < 4:
        e += 1
        if e == 2:
            continue
        u = np.uint8(9)
    out_f[t * 3 + 2] = 0.5 + (-u)
    out_i[t] = c + d + e
