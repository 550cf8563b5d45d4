# Numba's compiled semantics of min_and_max_of_a_constant_and_an_absolute_value.py.
import numpy as np
from numba import njit


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    # Each abs of its own element: the fold took an abs with no other use.
    out_f[t * 4 + 0] = min(0.0, abs(a_f64[t + 1]))
    out_f[t * 4 + 1] = max(-0.0, -abs(a_f64[t + 2]))
    out_f[t * 4 + 2] = min(abs(a_f64[t + 3]), 0.0)
    out_f[t * 4 + 3] = max(0.0, abs(a_f64[t + 4]))
