# Found by the differential tester (seed 930265: a flag assigned True in a
# while loop that surely runs is a phi in Numba's SSA form, which its
# dead-branch pruning never evaluates, so both sides of `a if flag else b`
# are typed and the value is an int64; deciding the branch made it an int8,
# and a tuple of it indexed at run time would not compile), then reduced by
# hand.
import numpy as np
from numba import cuda

DEBUG = False


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
    flag = a_i64[t % 16] < -7
    c = 0
    while c < 2:
        c += 1
        flag = True
    v0 = a_i8[t % 16] if flag else 1
    out_i[t * 4 + 0] = v0
    out_i[t * 4 + 1] = (1, 1, v0)[t % 3]
    kept = True
    for i in range(2):
        if DEBUG:
            kept = False
    v1 = a_i8[t % 16] if kept else t
    out_i[t * 4 + 2] = v1 + np.int8(100)
    out_i[t * 4 + 3] = flag
