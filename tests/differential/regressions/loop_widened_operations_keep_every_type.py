# Found by the differential tester (an operation typed again after a loop
# widened its operand kept only its last type, where Numba keeps the union
# of every type it had), then reduced by hand.
import numpy as np
from numba import cuda


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
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
