"""Five kernels written once, in Numba's CUDA dialect, for the device
check's side-by-side step (scripts/gpu_check/side_by_side_runs.py): Kiln
builds this file into the bundle, numba-cuda imports it as it is on the GPU
machine, and both run the same kernels on the same GPU.

`cache=True` lets numba-cuda keep what it compiled in NUMBA_CACHE_DIR, so
that a second process measures its warm first call; Kiln's build has
compiled everything already and ignores it.
"""

from numba import cuda, float32

TILE = 16  # the matmul's tile edge: blocks of TILE x TILE threads
REDUCTION_BLOCK = 256  # threads per block of block_sum, and its shared array's length


@cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])", cache=True)
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit("void(float32[:, ::1], float32[:, ::1])", cache=True)
def stencil(grid, smoothed):
    """Five-point Jacobi step: each interior point becomes the mean of its
    four neighbours; the border is copied."""
    col, row = cuda.grid(2)  # x runs along rows, so that neighbouring threads read neighbouring floats
    rows, cols = grid.shape
    if row < rows and col < cols:
        if row > 0 and row < rows - 1 and col > 0 and col < cols - 1:
            smoothed[row, col] = float32(0.25) * (grid[row - 1, col] + grid[row + 1, col] +
                                                  grid[row, col - 1] + grid[row, col + 1])
        else:
            smoothed[row, col] = grid[row, col]


@cuda.jit("void(float32[::1], float32[::1])", cache=True)
def block_sum(values, partial_sums):
    """Each block's share of `values` (a grid-stride loop), summed as a tree
    in shared memory: partial_sums[block] (the host adds the blocks')."""
    shared = cuda.shared.array(REDUCTION_BLOCK, float32)
    thread = cuda.threadIdx.x
    total = float32(0)
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        total += values[i]
    shared[thread] = total
    cuda.syncthreads()
    step = REDUCTION_BLOCK // 2
    while step > 0:
        if thread < step:
            shared[thread] += shared[thread + step]
        cuda.syncthreads()
        step //= 2
    if thread == 0:
        partial_sums[cuda.blockIdx.x] = shared[0]


@cuda.jit(device=True)
def escape_time(real, imag, max_iterations):
    """How many iterations z = z * z + c takes to leave the circle of radius
    2 (max_iterations: it never does)."""
    c = complex(real, imag)
    z = 0j
    for i in range(max_iterations):
        z = z * z + c
        if z.real * z.real + z.imag * z.imag >= 4:
            return i
    return max_iterations


@cuda.jit("void(float64, float64, float64, float64, int32[:, ::1], int64)", cache=True)
def mandelbrot(min_x, max_x, min_y, max_y, image, max_iterations):
    col, row = cuda.grid(2)
    rows, cols = image.shape
    if row < rows and col < cols:
        real = min_x + col * (max_x - min_x) / cols
        imag = min_y + row * (max_y - min_y) / rows
        image[row, col] = escape_time(real, imag, max_iterations)


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])", cache=True)
def matmul(a, b, c):
    """c = a @ b, TILE x TILE tiles of a and b staged in shared memory (the
    fast_matmul of Numba's documentation)."""
    a_tile = cuda.shared.array((TILE, TILE), float32)
    b_tile = cuda.shared.array((TILE, TILE), float32)
    col, row = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    total = float32(0)
    for tile in range((a.shape[1] + TILE - 1) // TILE):
        a_tile[ty, tx] = 0
        b_tile[ty, tx] = 0
        if row < a.shape[0] and tx + tile * TILE < a.shape[1]:
            a_tile[ty, tx] = a[row, tx + tile * TILE]
        if col < b.shape[1] and ty + tile * TILE < b.shape[0]:
            b_tile[ty, tx] = b[ty + tile * TILE, col]
        cuda.syncthreads()
        for k in range(TILE):
            total += a_tile[ty, k] * b_tile[k, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = total


@cuda.jit("void(float32[::1])", cache=True)
def noop(a):
    """Does nothing: what one launch costs, with one array argument."""
