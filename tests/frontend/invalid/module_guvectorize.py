# Tests: @guvectorize, which Kiln does not support yet.
from numba import guvectorize


@guvectorize(["void(float32[:], float32[:])"], "(n)->()", target="cuda")  # expect-error: @guvectorize is not supported yet
def row_sum(x, out):
    s = 0.0
    for v in x:
        s += v
    out[0] = s
