# Found by the differential tester (the CPU engine computed min(0.0, abs(x))
# as abs(min(0.0, x)): a fold of LLVM 19 met the compares and selects the
# host code spelt min and max with), then reduced by hand.
import numpy as np
from numba import cuda


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
    # Each abs of its own element: the fold took an abs with no other use.
    out_f[t * 4 + 0] = min(0.0, abs(a_f64[t + 1]))
    out_f[t * 4 + 1] = max(-0.0, -abs(a_f64[t + 2]))
    out_f[t * 4 + 2] = min(abs(a_f64[t + 3]), 0.0)
    out_f[t * 4 + 3] = max(0.0, abs(a_f64[t + 4]))
