# Tests: unpacking a 3-tuple into two names.
from numba import cuda


@cuda.jit("void(float32[:, ::1])")
def fill(x):
    i, j = cuda.grid(3)  # expect-error: cannot unpack UniTuple(int64 x 3) into 2 values
    x[i, j] = 0
