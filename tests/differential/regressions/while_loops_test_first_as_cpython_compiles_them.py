# Found by the differential tester (seed 101111: a variable the loop body
# retypes reached the code after a `while` loop whose first test constants
# decide through a phi with the type before the loop), then reduced by hand.
import numpy as np
from numba import cuda


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
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
