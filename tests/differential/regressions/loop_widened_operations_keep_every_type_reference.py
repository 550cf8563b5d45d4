# Numba's compiled semantics of loop_widened_operations_keep_every_type.py.
import numpy as np
from numba import njit


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    x = np.uint8(a_i64[t % 16])
    for i in range(1):
        x ^= a_i64[(t + 3) % 16]
    inverted = ~x
    negated = -x
    masked = x & np.uint8(3)
    out_i[t * 4 + 0] = inverted
    out_i[t * 4 + 1] = negated
    out_i[t * 4 + 2] = masked
    out_i[t * 4 + 3] = x
