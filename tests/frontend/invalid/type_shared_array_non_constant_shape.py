# Tests: cuda.shared.array with a shape computed in the kernel (Numba needs literal constants).
from numba import cuda, float32

TILE = 16


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def transpose(a, out):
    tile = cuda.shared.array((TILE, TILE + 1), float32)  # expect-error: must be an integer or a tuple of integers known at compile time, not Tuple(Literal[int](16), int64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = tile[tx, ty]
