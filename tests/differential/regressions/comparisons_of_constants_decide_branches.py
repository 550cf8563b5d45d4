# Found by the differential campaign (seed 4579: Kiln computed in int64 what
# Numba computes in uint32), then reduced by hand. Numba's dead-branch
# pruning evaluates a comparison of constants before typing: in
# `x % x if -1099511627776 >= -5 != x else np.uint32(x)` the first
# comparison is False, so only np.uint32(x) is typed and `~` inverts a
# uint32. A local counts as a constant where the assignment reaching the
# comparison is one, whatever other assignments it has; not where a loop
# changes it.
import numpy as np
from numba import cuda


@cuda.jit(device=True)
def pruned_ternary(p0):
    p0 = -18
    p0 = ((p0 % p0) if (-1099511627776 >= -5 != p0) else np.uint32(p0))
    p0 = ~p0
    return abs(p0)


@cuda.jit(device=True)
def changed_by_loop(v):
    limit = 3
    for i in range(2):
        if limit < 1:
            v = 1.5
        limit = 5
    return v


@cuda.jit(device=True)
def twice_assigned(v):
    limit = 7
    limit = 3
    if limit > 5:
        v = 1.5
    limit = 4
    return ~v


@cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:], float32[:], float64[:], int64[:], float64[:], int64[:], float64[:])")
def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    t = cuda.grid(1)
    out_i[t * 4 + 0] = pruned_ternary(a_i64[t])
    out_f[t * 4 + 1] = changed_by_loop(a_i32[t])
    out_i[t * 4 + 1] = twice_assigned(a_i32[t])
