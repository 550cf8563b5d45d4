# Found by the differential tester (an assignment on the side of a constant
# condition that never runs still widened the variable's type), then reduced
# by hand. CPython compiles `if False:` and `a if True else b` without the
# other side, so Numba types `~x` on a uint16.
import numpy as np
from numba import cuda


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
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
