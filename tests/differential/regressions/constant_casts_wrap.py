# Found by the differential tester (a NumPy scalar constructor applied to a
# constant gave the constant unconverted), then reduced by hand.
import numpy as np
from numba import cuda


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
    x = 2147483648
    out_i[t * 4 + 0] = np.int64(np.int8(np.uint16(2147483648)))
    out_i[t * 4 + 1] = np.int64(np.int8(np.uint16(x)))
    out_i[t * 4 + 2] = np.uint16(70000) + t
    out_i[t * 4 + 3] = np.int8(np.uint16(65535))
    out_f[t * 2 + 0] = np.float32(16777217)
    out_f[t * 2 + 1] = np.float32(0.1)
