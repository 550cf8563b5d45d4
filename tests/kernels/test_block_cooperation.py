"""Threads of a block working together on the CPU engine: barriers, shared
memory (static, dynamic, in device functions), block reductions and scans,
tiled transpose and matmul, syncthreads_count/and/or, 2-D and 3-D blocks.

Every kernel is compiled once (module fixture) and checked against NumPy.
"""

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda, float32, float64, int32, int64, uint32, void

BLOCK = 128
TILE = 16
TILE_PAD = TILE + 1
STEPS = 10
BLOCK2 = 2 * BLOCK


@cuda.jit(void(float64[::1], float64[::1]))
def smooth_in_shared(x, out):
    """STEPS rounds of a 3-point average of the block's slice, in place in
    shared memory: two barriers per round, in a loop."""
    buf = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i]
    cuda.syncthreads()
    for step in range(STEPS):
        left = buf[tid - 1] if tid > 0 else buf[tid]
        right = buf[tid + 1] if tid < BLOCK - 1 else buf[tid]
        value = (left + buf[tid] + right) / 3.0
        cuda.syncthreads()
        buf[tid] = value
        cuda.syncthreads()
    out[i] = buf[tid]


@cuda.jit(void(int64[::1], int64[::1]))
def block_sum(x, partial):
    """Tree reduction of each block's slice, padded with zeros."""
    cache = cuda.shared.array(BLOCK, int64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    cache[tid] = x[i] if i < x.size else 0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if tid < stride:
            cache[tid] += cache[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = cache[0]


@cuda.jit(void(float32[::1], float32[::1]))
def block_max_early_exit(x, partial):
    """Threads beyond x.size leave before any barrier."""
    cache = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    cache[tid] = -1e30
    if i >= x.size:
        return
    cache[tid] = x[i]
    cuda.syncthreads()
    if tid == 0:
        best = cache[0]
        for k in range(1, BLOCK):
            best = max(best, cache[k])
        partial[cuda.blockIdx.x] = best


@cuda.jit(void(int32[::1], int32[::1]))
def scan_hillis_steele(x, out):
    """Inclusive scan of each block's slice, double-buffered."""
    buf = cuda.shared.array((2, BLOCK), int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[0, tid] = x[i]
    cuda.syncthreads()
    src = 0
    offset = 1
    while offset < BLOCK:
        dst = 1 - src
        if tid >= offset:
            buf[dst, tid] = buf[src, tid] + buf[src, tid - offset]
        else:
            buf[dst, tid] = buf[src, tid]
        cuda.syncthreads()
        src = dst
        offset *= 2
    out[i] = buf[src, tid]


@cuda.jit(void(int64[::1], int64[::1], int64[::1]))
def scan_blelloch(x, out, totals):
    """Exclusive scan of each block's 2 * BLOCK elements (work-efficient:
    up-sweep, clear, down-sweep); totals gets each block's sum."""
    temp = cuda.shared.array(BLOCK2, int64)
    tid = cuda.threadIdx.x
    base = cuda.blockIdx.x * 2 * BLOCK
    n = 2 * BLOCK
    temp[2 * tid] = x[base + 2 * tid]
    temp[2 * tid + 1] = x[base + 2 * tid + 1]
    offset = 1
    d = n >> 1
    while d > 0:
        cuda.syncthreads()
        if tid < d:
            ai = offset * (2 * tid + 1) - 1
            bi = offset * (2 * tid + 2) - 1
            temp[bi] += temp[ai]
        offset *= 2
        d >>= 1
    if tid == 0:
        totals[cuda.blockIdx.x] = temp[n - 1]
        temp[n - 1] = 0
    d = 1
    while d < n:
        offset >>= 1
        cuda.syncthreads()
        if tid < d:
            ai = offset * (2 * tid + 1) - 1
            bi = offset * (2 * tid + 2) - 1
            t = temp[ai]
            temp[ai] = temp[bi]
            temp[bi] += t
        d *= 2
    cuda.syncthreads()
    out[base + 2 * tid] = temp[2 * tid]
    out[base + 2 * tid + 1] = temp[2 * tid + 1]


@cuda.jit(void(float32[:, ::1], float32[:, ::1]))
def transpose_tiled(a, out):
    """out = a.T through a padded 2-D tile, any shape (edge tiles guarded)."""
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    col = cuda.blockIdx.y * TILE + tx
    row = cuda.blockIdx.x * TILE + ty
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = tile[tx, ty]


@cuda.jit(void(float64[:, ::1], float64[:, ::1], float64[:, ::1]))
def matmul_tiled(a, b, c):
    """c = a @ b with TILE x TILE shared tiles of a and b."""
    sa = cuda.shared.array((TILE, TILE), float64)
    sb = cuda.shared.array((TILE, TILE), float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = 0.0
    for t in range((a.shape[1] + TILE - 1) // TILE):
        k = t * TILE + tx
        sa[ty, tx] = a[row, k] if row < a.shape[0] and k < a.shape[1] else 0.0
        k = t * TILE + ty
        sb[ty, tx] = b[k, col] if k < b.shape[0] and col < b.shape[1] else 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit(void(int32[::1], int32[:, ::1]))
def barrier_votes(x, out):
    """syncthreads_count/and/or of x > 0 over the block, from every thread."""
    i = cuda.grid(1)
    p = 1 if x[i] > 0 else 0
    out[i, 0] = cuda.syncthreads_count(p)
    out[i, 1] = cuda.syncthreads_and(p)
    out[i, 2] = cuda.syncthreads_or(p)


@cuda.jit(void(int32[::1], int32[::1]))
def barrier_count_in_loop(x, out):
    """syncthreads_count as a loop condition: each round, threads with work
    left decrement it, until no thread of the block has any."""
    i = cuda.grid(1)
    work = x[i]
    rounds = 0
    while cuda.syncthreads_count(work) > 0:
        if work > 0:
            work -= 1
        rounds += 1
    out[i] = rounds


@cuda.jit(void(float32[::1], float32[::1], int64[::1]))
def reverse_dynamic(x, out, sizes):
    """Reverses each block's slice through cuda.shared.array(0, ...), sized
    by the launch; records len() of the dynamic array."""
    dyn = cuda.shared.array(0, float32)
    tid = cuda.threadIdx.x
    n = cuda.blockDim.x
    i = cuda.grid(1)
    dyn[tid] = x[i]
    cuda.syncthreads()
    out[i] = dyn[n - 1 - tid]
    if tid == 0:
        sizes[cuda.blockIdx.x] = len(dyn)


@cuda.jit(void(int32[::1], int32[::1], int64[::1]))
def static_and_dynamic(x, out, sizes):
    """Static and dynamic shared memory side by side must not overlap; two
    dynamic arrays of different types share one address, as in Numba."""
    fixed = cuda.shared.array(BLOCK, int32)
    dyn = cuda.shared.array(0, int32)
    as_float = cuda.shared.array(0, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    fixed[tid] = x[i]
    dyn[tid] = -x[i]
    cuda.syncthreads()
    out[i] = fixed[BLOCK - 1 - tid] * 1000 + dyn[BLOCK - 1 - tid]
    cuda.syncthreads()
    if tid == 0:
        sizes[0] = len(dyn)
        sizes[1] = len(as_float)
        as_float[0] = 1.0
        sizes[2] = dyn[0]


@cuda.jit(device=True)
def block_total(value):
    """Sum over the block, in a shared array owned by the device function."""
    cache = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    cache[tid] = value
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if tid < stride:
            cache[tid] += cache[tid + stride]
        cuda.syncthreads()
        stride //= 2
    total = cache[0]
    cuda.syncthreads()
    return total


@cuda.jit(void(float64[::1], float64[:, ::1]))
def device_function_shared(x, out):
    """Calls the device function twice: the second call reuses its shared
    array, after the barrier that ends the first."""
    i = cuda.grid(1)
    out[i, 0] = block_total(x[i])
    out[i, 1] = block_total(x[i] * x[i])


@cuda.jit(void(int32[:, :, ::1], int64[::1]))
def block_3d_sum(x, partial):
    """A 3-D block summing its 3-D shared copy: threadIdx.z/y/x map to the
    array axes, and the linear index x + X * (y + Y * z) covers the block."""
    cube = cuda.shared.array((4, 4, 8), int32)
    flat = cuda.shared.array(128, int64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tz = cuda.threadIdx.z
    bz = cuda.blockIdx.x
    cube[tz, ty, tx] = x[bz * 4 + tz, ty, tx]
    cuda.syncthreads()
    linear = tx + cuda.blockDim.x * (ty + cuda.blockDim.y * tz)
    # Read a different thread's element, so the barrier matters.
    other = 127 - linear
    flat[linear] = cube[other // 32, (other // 8) % 4, other % 8]
    cuda.syncthreads()
    stride = 64
    while stride > 0:
        if linear < stride:
            flat[linear] += flat[linear + stride]
        cuda.syncthreads()
        stride //= 2
    if linear == 0:
        partial[bz] = flat[0]


@cuda.jit(void(int32[:, ::1], int32[:, ::1]))
def rotate_2d_block(x, out):
    """A (8, 4) block rotating its tile by 90 degrees in shared memory, over
    a 2-D grid."""
    tile = cuda.shared.array((4, 8), int32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * 4
    c0 = cuda.blockIdx.x * 8
    tile[ty, tx] = x[r0 + ty, c0 + tx]
    cuda.syncthreads()
    # out tile[r, c] = tile[3 - r, 7 - c] (180 degrees, every thread reads
    # another thread's element).
    out[r0 + ty, c0 + tx] = tile[3 - ty, 7 - tx]


@cuda.jit(void(int64[::1], int64[::1]))
def block_sum_1024(x, partial):
    """The largest block, (32, 32) threads, reducing 1024 values."""
    cache = cuda.shared.array(1024, int64)
    t = cuda.threadIdx.x + 32 * cuda.threadIdx.y
    base = cuda.blockIdx.x * 1024
    cache[t] = x[base + t]
    cuda.syncthreads()
    stride = 512
    while stride > 0:
        if t < stride:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


@cuda.jit(void(int32[:, :, ::1]))
def grid_3d_block_ids(out):
    """Thread (0, 0, 0) of each block of a 3-D grid publishes its block's
    id in shared memory; every thread of the block reads it back."""
    slot = cuda.shared.array(1, int32)
    x, y, z = cuda.grid(3)
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0:
        slot[0] = cuda.blockIdx.x + 10 * cuda.blockIdx.y + 100 * cuda.blockIdx.z
    cuda.syncthreads()
    out[z, y, x] = slot[0]


@cuda.jit(void(int64[::1]))
def dynamic_length_without_barrier(out):
    """No thread waits here, so the block runs as one loop: the dynamic
    array's length must reach that path too."""
    dyn = cuda.shared.array(0, int64)
    out[cuda.grid(1)] = len(dyn)


@cuda.jit(void(float64[::1], float64[::1]))
def large_local_arrays_across_barrier(x, out):
    """160 KB of local array per thread, live across barriers."""
    scratch = cuda.local.array(20000, float64)
    share = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    for k in range(20000):
        scratch[k] = x[cuda.grid(1)] + k
    share[tid] = scratch[19999]
    cuda.syncthreads()
    total = 0.0
    for k in range(20000):
        total += scratch[k]
    cuda.syncthreads()
    out[cuda.grid(1)] = total + share[BLOCK - 1 - tid]
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("block_cooperation"))


BLOCK = 128
TILE = 16


def test_syncthreads_in_a_loop(m):
    rng = np.random.default_rng(1)
    blocks = 3
    x = rng.standard_normal(blocks * BLOCK)
    out = np.zeros_like(x)
    m.smooth_in_shared[blocks, BLOCK](x, out)
    expected = x.reshape(blocks, BLOCK).copy()
    for _ in range(10):
        left = np.concatenate([expected[:, :1], expected[:, :-1]], axis=1)
        right = np.concatenate([expected[:, 1:], expected[:, -1:]], axis=1)
        expected = (left + expected + right) / 3.0
    np.testing.assert_allclose(out, expected.reshape(-1), rtol=1e-12,
                               err_msg="3-point smoothing with barriers in a loop")


def test_block_sum_tree_reduction(m):
    n = 1000  # 8 blocks, the last one partly past the end
    blocks = (n + BLOCK - 1) // BLOCK
    x = np.arange(1, n + 1, dtype=np.int64) ** 2
    partial = np.zeros(blocks, dtype=np.int64)
    m.block_sum[blocks, BLOCK](x, partial)
    padded = np.zeros(blocks * BLOCK, dtype=np.int64)
    padded[:n] = x
    np.testing.assert_array_equal(partial, padded.reshape(blocks, BLOCK).sum(axis=1),
                                  err_msg="per-block tree reduction in shared memory")


def test_barrier_after_threads_exited(m):
    n = 300  # the third block has 44 live threads
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    partial = np.zeros(3, dtype=np.float32)
    m.block_max_early_exit[3, BLOCK](x, partial)
    expected = [x[0:128].max(), x[128:256].max(), x[256:].max()]
    np.testing.assert_array_equal(
        partial, np.array(expected, dtype=np.float32),
        err_msg="syncthreads must complete when the other threads of the block have exited")


def test_inclusive_scan_hillis_steele(m):
    blocks = 4
    x = np.random.default_rng(3).integers(-100, 100, blocks * BLOCK).astype(np.int32)
    out = np.zeros_like(x)
    m.scan_hillis_steele[blocks, BLOCK](x, out)
    expected = np.cumsum(x.reshape(blocks, BLOCK), axis=1).reshape(-1).astype(np.int32)
    np.testing.assert_array_equal(out, expected, err_msg="Hillis-Steele inclusive scan per block")


def test_exclusive_scan_blelloch(m):
    blocks = 3
    x = np.random.default_rng(4).integers(0, 1 << 40, blocks * 2 * BLOCK).astype(np.int64)
    out = np.zeros_like(x)
    totals = np.zeros(blocks, dtype=np.int64)
    m.scan_blelloch[blocks, BLOCK](x, out, totals)
    rows = x.reshape(blocks, 2 * BLOCK)
    inclusive = np.cumsum(rows, axis=1)
    exclusive = (inclusive - rows).reshape(-1)
    np.testing.assert_array_equal(out, exclusive, err_msg="Blelloch exclusive scan per block")
    np.testing.assert_array_equal(totals, rows.sum(axis=1), err_msg="Blelloch block totals")


@pytest.mark.parametrize("shape", [(16, 16), (37, 50), (5, 70)])
def test_transpose_with_shared_tile(m, shape):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    out = np.full((shape[1], shape[0]), -1, dtype=np.float32)
    grid = ((shape[1] + TILE - 1) // TILE, (shape[0] + TILE - 1) // TILE)
    m.transpose_tiled[grid, (TILE, TILE)](a, out)
    np.testing.assert_array_equal(out, a.T, err_msg=f"tiled transpose of a {shape} matrix")


def test_matmul_with_shared_tiles(m):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((45, 33))
    b = rng.standard_normal((33, 20))
    c = np.zeros((45, 20))
    grid = ((20 + TILE - 1) // TILE, (45 + TILE - 1) // TILE)
    m.matmul_tiled[grid, (TILE, TILE)](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12,
                               err_msg="tiled matmul with two shared tiles")


@pytest.mark.parametrize(
    "case", ["all_true", "all_false", "one_true", "one_false", "mixed"]
)
def test_syncthreads_count_and_or(m, case):
    threads = 96
    blocks = 2
    rng = np.random.default_rng(6)
    x = {
        "all_true": np.ones(blocks * threads),
        "all_false": np.zeros(blocks * threads),
        "one_true": np.eye(1, blocks * threads, 70).reshape(-1),
        "one_false": 1 - np.eye(1, blocks * threads, 170).reshape(-1),
        "mixed": rng.integers(0, 2, blocks * threads),
    }[case].astype(np.int32)
    out = np.zeros((blocks * threads, 3), dtype=np.int32)
    m.barrier_votes[blocks, threads](x, out)
    for block in range(blocks):
        part = x[block * threads:(block + 1) * threads] > 0
        expected = [part.sum(), int(part.all()), int(part.any())]
        got = out[block * threads:(block + 1) * threads]
        assert (got == expected).all(), (
            f"block {block}: syncthreads_count/and/or gave "
            f"{np.unique(got, axis=0).tolist()}, expected {expected} for every thread"
        )


def test_syncthreads_count_as_loop_condition(m):
    threads = 64
    x = np.random.default_rng(7).integers(0, 9, 2 * threads).astype(np.int32)
    out = np.zeros_like(x)
    m.barrier_count_in_loop[2, threads](x, out)
    expected = np.repeat(x.reshape(2, threads).max(axis=1), threads)
    np.testing.assert_array_equal(out, expected,
                                  err_msg="rounds of a loop ended by syncthreads_count")


@pytest.mark.parametrize("threads", [32, 100, 256])
def test_dynamic_shared_memory(m, threads):
    blocks = 3
    x = np.arange(blocks * threads, dtype=np.float32)
    out = np.zeros_like(x)
    sizes = np.zeros(blocks, dtype=np.int64)
    m.reverse_dynamic[blocks, threads, 0, threads * 4](x, out, sizes)
    expected = x.reshape(blocks, threads)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(out, expected,
                                  err_msg="reversal through dynamic shared memory")
    np.testing.assert_array_equal(
        sizes, [threads] * blocks,
        err_msg="len(cuda.shared.array(0, float32)) must be the launch's dynamic bytes / 4")


def test_dynamic_shared_memory_with_more_bytes_than_used(m):
    out = np.zeros(64, dtype=np.float32)
    sizes = np.zeros(1, dtype=np.int64)
    m.reverse_dynamic[1, 64, 0, 1000](np.arange(64, dtype=np.float32), out, sizes)
    assert sizes[0] == 250, f"len() of 1000 dynamic bytes as float32 is {sizes[0]}, not 250"
    np.testing.assert_array_equal(out, np.arange(64, dtype=np.float32)[::-1])


def test_static_and_dynamic_shared_memory_do_not_overlap(m):
    blocks = 2
    x = np.arange(1, blocks * BLOCK + 1, dtype=np.int32)
    out = np.zeros_like(x)
    sizes = np.zeros(3, dtype=np.int64)
    m.static_and_dynamic[blocks, BLOCK, 0, BLOCK * 4](x, out, sizes)
    rev = x.reshape(blocks, BLOCK)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(out, rev * 1000 - rev,
                                  err_msg="static and dynamic shared arrays overlap")
    assert sizes[0] == BLOCK and sizes[1] == BLOCK, f"len() of the dynamic arrays: {sizes[:2]}"
    assert sizes[2] == np.float32(1.0).view(np.int32), (
        "dynamic shared arrays of two types must start at the same address "
        f"(read {sizes[2]:#x} as int32 after storing 1.0 as float32)"
    )


def test_shared_array_in_device_function(m):
    blocks = 3
    x = np.random.default_rng(8).integers(-50, 50, blocks * BLOCK).astype(np.float64)
    out = np.zeros((blocks * BLOCK, 2))
    m.device_function_shared[blocks, BLOCK](x, out)
    rows = x.reshape(blocks, BLOCK)
    np.testing.assert_array_equal(out[:, 0], np.repeat(rows.sum(axis=1), BLOCK),
                                  err_msg="first call of a device function with a shared array")
    np.testing.assert_array_equal(out[:, 1], np.repeat((rows**2).sum(axis=1), BLOCK),
                                  err_msg="second call of a device function with a shared array")


def test_three_dimensional_block(m):
    blocks = 5
    x = np.random.default_rng(9).integers(-1000, 1000, (blocks * 4, 4, 8)).astype(np.int32)
    partial = np.zeros(blocks, dtype=np.int64)
    m.block_3d_sum[blocks, (8, 4, 4)](x, partial)
    np.testing.assert_array_equal(partial, x.reshape(blocks, -1).sum(axis=1),
                                  err_msg="3-D blocks (8, 4, 4) reducing a 3-D shared array")


def test_two_dimensional_block_and_grid(m):
    x = np.arange(12 * 24, dtype=np.int32).reshape(12, 24)
    out = np.zeros_like(x)
    m.rotate_2d_block[(3, 3), (8, 4)](x, out)
    expected = x.reshape(3, 4, 3, 8)[:, ::-1, :, ::-1].reshape(12, 24)
    np.testing.assert_array_equal(out, expected,
                                  err_msg="180-degree rotation of each (4, 8) tile in 2-D blocks")


def test_largest_block(m):
    blocks = 6
    x = np.random.default_rng(10).integers(-(1 << 40), 1 << 40, blocks * 1024)
    partial = np.zeros(blocks, dtype=np.int64)
    m.block_sum_1024[blocks, (32, 32)](x, partial)
    np.testing.assert_array_equal(partial, x.reshape(blocks, 1024).sum(axis=1),
                                  err_msg="(32, 32) blocks reducing through shared memory")


def test_three_dimensional_grid(m):
    grid, block = (3, 4, 5), (4, 2, 3)
    out = np.zeros((15, 8, 12), dtype=np.int32)
    m.grid_3d_block_ids[grid, block](out)
    z, y, x = np.indices(out.shape)
    expected = x // 4 + 10 * (y // 2) + 100 * (z // 3)
    np.testing.assert_array_equal(out, expected,
                                  err_msg="each block of a 3-D grid sees its own shared memory")


def test_dynamic_length_in_a_block_without_barriers(m):
    out = np.zeros(64, dtype=np.int64)
    m.dynamic_length_without_barrier[2, 32, 0, 800](out)
    assert (out == 100).all(), f"len() of 800 dynamic bytes as int64: {np.unique(out)}"


def test_large_local_arrays_in_threads_that_wait(m):
    blocks = 2
    x = np.arange(blocks * BLOCK, dtype=np.float64)
    out = np.zeros_like(x)
    m.large_local_arrays_across_barrier[blocks, BLOCK](x, out)
    k = np.arange(20000)
    totals = np.array([(v + k).sum() for v in x])
    mirrored = x.reshape(blocks, BLOCK)[:, ::-1].reshape(-1) + 19999
    np.testing.assert_array_equal(out, totals + mirrored,
                                  err_msg="local arrays of threads that wait at barriers")
