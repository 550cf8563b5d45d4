"""Warp-level intrinsics on the CPU engine: every shuffle on every value
type it takes (with out-of-range lanes as PTX defines them for the c
operand Numba passes), warp reductions, votes, match, activemask,
lanemask_lt, syncwarp, laneid/warpsize, partial masks, and blocks whose size
is not a multiple of 32.
"""

import numpy as np
import pytest

import kiln_cpu

SHFL_TYPES = ["int32", "int64", "float32", "float64"]


def sigs(pattern, dtypes):
    return "[" + ", ".join(repr(pattern.replace("T", t)) for t in dtypes) + "]"


SOURCE = f'''
from numba import cuda, float32, float64, int32, int64, uint32, void

FULL = 0xffffffff


@cuda.jit({sigs("void(T[::1], T[::1], int32[::1])", SHFL_TYPES)})
def shfl_idx(x, out, src):
    i = cuda.grid(1)
    out[i] = cuda.shfl_sync(FULL, x[i], src[i])


@cuda.jit({sigs("void(T[::1], T[::1], int32)", SHFL_TYPES)})
def shfl_up(x, out, delta):
    i = cuda.grid(1)
    out[i] = cuda.shfl_up_sync(FULL, x[i], delta)


@cuda.jit({sigs("void(T[::1], T[::1], int32)", SHFL_TYPES)})
def shfl_down(x, out, delta):
    i = cuda.grid(1)
    out[i] = cuda.shfl_down_sync(FULL, x[i], delta)


@cuda.jit({sigs("void(T[::1], T[::1], int32)", SHFL_TYPES)})
def shfl_xor(x, out, lane_mask):
    i = cuda.grid(1)
    out[i] = cuda.shfl_xor_sync(FULL, x[i], lane_mask)


@cuda.jit({sigs("void(T[::1], T[::1])", SHFL_TYPES)})
def warp_sum_down(x, out):
    """Lane 0 of each warp writes the warp's sum (shfl_down tree)."""
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit({sigs("void(T[::1], T[::1])", SHFL_TYPES)})
def warp_allreduce_xor(x, out):
    """Every lane gets the warp's maximum (butterfly)."""
    i = cuda.grid(1)
    v = x[i]
    for k in range(5):
        v = max(v, cuda.shfl_xor_sync(FULL, v, 1 << k))
    out[i] = v


@cuda.jit(void(float64[::1], float64[::1]))
def partial_warp_sum(x, out):
    """A warp sum that is correct in a partial last warp: the mask is the
    warp's lanes that exist, and a lane adds only values from lanes that
    exist."""
    i = cuda.grid(1)
    lane = cuda.laneid
    threads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    linear = tx + cuda.blockDim.x * (ty + cuda.blockDim.y * tz)
    first = linear - lane
    live = min(32, threads - first)
    mask = cuda.activemask()
    v = x[cuda.blockIdx.x * threads + linear]
    offset = 1
    while offset < 32:
        other = cuda.shfl_down_sync(mask, v, offset)
        if lane + offset < live:
            v += other
        offset *= 2
    if lane == 0:
        out[cuda.blockIdx.x * 32 + linear // 32] = v
    if linear == 0:
        out[cuda.blockIdx.x * 32 + 31] = mask


@cuda.jit(void(float32[::1], float32[::1]))
def block_sum_two_level(x, partial):
    """Warp sums with shuffles, then the first warp sums the warp sums from
    shared memory: barriers and shuffles in one kernel, any block size."""
    sums = cuda.shared.array(32, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    lane = cuda.laneid
    live = min(32, cuda.blockDim.x - (tid - lane))
    v = x[i] if i < x.size else float32(0)
    offset = 16
    while offset > 0:
        other = cuda.shfl_down_sync(cuda.activemask(), v, offset)
        if lane + offset < live:
            v += other
        offset //= 2
    if lane == 0:
        sums[tid // 32] = v
    cuda.syncthreads()
    warps = (cuda.blockDim.x + 31) // 32
    if tid < 32:
        v = sums[tid] if tid < warps else float32(0)
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(FULL, v, offset)
            offset //= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = v


@cuda.jit(void(int32[::1], int32[:, ::1]))
def votes(p, out):
    i = cuda.grid(1)
    out[i, 0] = cuda.all_sync(FULL, p[i])
    out[i, 1] = cuda.any_sync(FULL, p[i])
    out[i, 2] = cuda.eq_sync(FULL, p[i])
    out[i, 3] = cuda.ballot_sync(FULL, p[i])
    b = p[i] != 0
    out[i, 4] = cuda.ballot_sync(FULL, b)
    out[i, 5] = cuda.all_sync(FULL, b)


@cuda.jit(void(int32[::1], int32[:, ::1]))
def votes_partial_mask(p, out):
    """The two half-warps vote separately, each naming only its lanes."""
    i = cuda.grid(1)
    if cuda.laneid < 16:
        out[i, 0] = cuda.ballot_sync(0x0000ffff, p[i])
        out[i, 1] = cuda.all_sync(0x0000ffff, p[i])
        out[i, 2] = cuda.any_sync(0x0000ffff, p[i])
        out[i, 3] = cuda.eq_sync(0x0000ffff, p[i])
    else:
        out[i, 0] = cuda.ballot_sync(0xffff0000, p[i])
        out[i, 1] = cuda.all_sync(0xffff0000, p[i])
        out[i, 2] = cuda.any_sync(0xffff0000, p[i])
        out[i, 3] = cuda.eq_sync(0xffff0000, p[i])


@cuda.jit({sigs("void(T[::1], int32[:, ::1])", SHFL_TYPES)})
def match(x, out):
    i = cuda.grid(1)
    out[i, 0] = cuda.match_any_sync(FULL, x[i])
    mask, same = cuda.match_all_sync(FULL, x[i])
    out[i, 1] = mask
    out[i, 2] = 1 if same else 0


@cuda.jit(void(uint32[:, ::1]))
def lane_info(out):
    """laneid, warpsize, lanemask_lt and activemask in 2-D blocks."""
    x = cuda.threadIdx.x
    y = cuda.threadIdx.y
    linear = x + cuda.blockDim.x * y
    row = cuda.blockIdx.x * cuda.blockDim.x * cuda.blockDim.y + linear
    out[row, 0] = cuda.laneid
    out[row, 1] = cuda.warpsize
    out[row, 2] = cuda.lanemask_lt()
    out[row, 3] = cuda.activemask()


@cuda.jit(void(int32[::1], int32[::1]))
def warp_reverse_syncwarp(x, out):
    """Each warp reverses its values through shared memory, ordered by
    syncwarp alone; then the low half-warp does it again among itself
    with syncwarp(0xffff)."""
    buf = cuda.shared.array(128, int32)
    tid = cuda.threadIdx.x
    lane = cuda.laneid
    base = tid - lane
    buf[tid] = x[tid]
    cuda.syncwarp()
    v = buf[base + 31 - lane]
    cuda.syncwarp(FULL)
    buf[tid] = v
    if lane < 16:
        cuda.syncwarp(0x0000ffff)
        v = buf[base + 15 - lane]
    out[tid] = v


@cuda.jit(void(int32[::1], int32[::1]))
def shfl_partial_mask(x, out):
    """Lanes 0-15 rotate among themselves (mask 0xffff, src_lane within the
    half), lanes 16-31 broadcast lane 31 (mask 0xffff0000)."""
    i = cuda.grid(1)
    lane = cuda.laneid
    if lane < 16:
        out[i] = cuda.shfl_sync(0x0000ffff, x[i], (lane + 1) % 16)
    else:
        out[i] = cuda.shfl_sync(0xffff0000, x[i], 31)


@cuda.jit(void(uint32[:, ::1]))
def activemask_divergent(out):
    """activemask() names the lanes that run the call together: in an
    if/else, each branch sees its own lanes."""
    i = cuda.grid(1)
    lane = cuda.laneid
    if lane % 3 == 0:
        out[i, 0] = cuda.activemask()
    else:
        out[i, 1] = cuda.activemask()
    out[i, 2] = cuda.activemask()


@cuda.jit(void(int32[::1], int32[::1], int32[::1]))
def warp_aggregated_increment(flags, counter, slots):
    """The warp-aggregated atomic idiom: the lanes with a flag elect a
    leader from activemask(), which takes one ticket per lane for the warp,
    and shares the base with shfl_sync over the same mask."""
    i = cuda.grid(1)
    if flags[i] != 0:
        mask = cuda.activemask()
        leader = cuda.ffs(mask) - 1
        lane = cuda.laneid
        base = 0
        if lane == leader:
            base = cuda.atomic.add(counter, 0, cuda.popc(mask))
        base = cuda.shfl_sync(mask, base, leader)
        below = mask & cuda.lanemask_lt()
        slots[i] = base + cuda.popc(below)
    cuda.syncthreads()


@cuda.jit(void(int32[::1], int32[::1]))
def shfl_after_exit(x, out):
    """Odd lanes leave; even lanes shuffle among themselves with the mask of
    even lanes."""
    i = cuda.grid(1)
    lane = cuda.laneid
    if lane % 2 == 1:
        return
    out[i] = cuda.shfl_sync(0x55555555, x[i], (lane + 2) % 32)


@cuda.jit(void(int64[::1]))
def shfl_literal(out):
    """An integer literal shuffles as an int64, as Numba types it."""
    i = cuda.grid(1)
    out[i] = cuda.shfl_xor_sync(FULL, 1 << 40, 5) + cuda.shfl_sync(FULL, 7, i % 32)
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("warp_intrinsics"))


def values_for(dtype, n):
    """Distinct per-thread values whose 64-bit forms differ in both halves."""
    k = np.arange(n)
    if dtype == "int32":
        return (k * 7919 - 50000).astype(np.int32)
    if dtype == "int64":
        return (k * (1 << 33) + k * 3 - (1 << 40)).astype(np.int64)
    if dtype == "float32":
        return (k * 1.25 - 17).astype(np.float32)
    return k * 1e10 + 0.5 - 3e11  # float64 with high and low bits in use


def shuffle_model(x, mode, b):
    """PTX shfl.sync with c = 0x1f (0 for up), whole warps."""
    out = x.copy()
    for i in range(x.size):
        lane, base = i % 32, i - i % 32
        bv = int(b[i] if np.ndim(b) else b) & 0x1F
        if mode == "idx":
            j, ok = bv, True
        elif mode == "up":
            j = lane - bv
            ok = j >= 0
        elif mode == "down":
            j = lane + bv
            ok = j <= 31
        else:
            j, ok = lane ^ bv, True
        if ok:
            out[i] = x[base + j]
    return out


BLOCKS, THREADS = 2, 128


@pytest.mark.parametrize("dtype", SHFL_TYPES)
def test_shfl_sync_source_lanes(m, dtype):
    n = BLOCKS * THREADS
    x = values_for(dtype, n)
    lane = np.arange(n) % 32
    # Broadcast, rotate, reversed, and out of range (40 & 31 = 8, -1 & 31 = 31).
    for src in [np.full(n, 5), (lane + 3) % 32, 31 - lane, np.full(n, 40), np.full(n, -1),
                lane * 7 + 100]:
        src = src.astype(np.int32)
        out = np.zeros_like(x)
        m.shfl_idx[BLOCKS, THREADS](x, out, src)
        np.testing.assert_array_equal(out, shuffle_model(x, "idx", src),
                                      err_msg=f"shfl_sync {dtype} with src_lane {src[:4]}...")


@pytest.mark.parametrize("dtype", SHFL_TYPES)
@pytest.mark.parametrize("mode", ["up", "down", "xor"])
def test_shfl_up_down_xor(m, dtype, mode):
    n = BLOCKS * THREADS
    x = values_for(dtype, n)
    kernel = {"up": m.shfl_up, "down": m.shfl_down, "xor": m.shfl_xor}[mode]
    for b in [0, 1, 3, 16, 31, 32, 33]:
        out = np.zeros_like(x)
        kernel[BLOCKS, THREADS](x, out, np.int32(b))
        np.testing.assert_array_equal(out, shuffle_model(x, mode, b),
                                      err_msg=f"shfl_{mode}_sync {dtype} by {b}")


@pytest.mark.parametrize("dtype", SHFL_TYPES)
def test_warp_sum_with_shfl_down(m, dtype):
    n = 4 * 96
    x = values_for(dtype, n)
    if dtype.startswith("float"):
        x = np.round(x).astype(dtype)  # exact sums
    out = np.zeros(n // 32, dtype=dtype)
    m.warp_sum_down[4, 96](x, out)
    np.testing.assert_array_equal(out, x.reshape(-1, 32).sum(axis=1).astype(dtype),
                                  err_msg=f"warp sums of {dtype} with shfl_down_sync")


@pytest.mark.parametrize("dtype", SHFL_TYPES)
def test_warp_max_with_shfl_xor(m, dtype):
    n = 2 * 64
    x = values_for(dtype, n)
    np.random.default_rng(21).shuffle(x)
    out = np.zeros_like(x)
    m.warp_allreduce_xor[2, 64](x, out)
    np.testing.assert_array_equal(out, np.repeat(x.reshape(-1, 32).max(axis=1), 32),
                                  err_msg=f"butterfly max of {dtype} with shfl_xor_sync")


@pytest.mark.parametrize("block", [(48, 1, 1), (20, 1, 1), (5, 7, 1), (3, 5, 7), (1, 1, 1)])
def test_partial_warps(m, block):
    threads = block[0] * block[1] * block[2]
    blocks = 3
    x = np.arange(blocks * threads, dtype=np.float64) + 1
    out = np.zeros(blocks * 32)
    m.partial_warp_sum[blocks, block](x, out)
    warps = (threads + 31) // 32
    for b in range(blocks):
        part = x[b * threads:(b + 1) * threads]
        expected = [part[w * 32:(w + 1) * 32].sum() for w in range(warps)]
        np.testing.assert_array_equal(
            out[b * 32:b * 32 + warps], expected,
            err_msg=f"warp sums in block {b} of shape {block} ({threads} threads)")
        first_warp = min(32, threads)
        mask = (1 << first_warp) - 1
        assert out[b * 32 + 31] == mask, (
            f"activemask() of the first warp of a {threads}-thread block: "
            f"{int(out[b * 32 + 31]):#x}, expected {mask:#x}"
        )


@pytest.mark.parametrize("threads", [256, 100, 33])
def test_block_sum_with_shuffles_and_barrier(m, threads):
    blocks = 5
    n = blocks * threads - 7
    x = (np.arange(n) % 13).astype(np.float32)
    partial = np.zeros(blocks, dtype=np.float32)
    m.block_sum_two_level[blocks, threads](x, partial)
    padded = np.zeros(blocks * threads, dtype=np.float32)
    padded[:n] = x
    np.testing.assert_array_equal(partial, padded.reshape(blocks, threads).sum(axis=1),
                                  err_msg=f"two-level block sum, {threads} threads per block")


@pytest.mark.parametrize("pattern", ["zeros", "ones", "one_lane", "random", "values"])
def test_votes(m, pattern):
    n = 2 * 64
    rng = np.random.default_rng(22)
    p = {
        "zeros": np.zeros(n),
        "ones": np.ones(n),
        "one_lane": np.eye(1, n, 37).reshape(-1),
        "random": rng.integers(0, 2, n),
        "values": rng.integers(-3, 4, n),  # any non-zero value is true
    }[pattern].astype(np.int32)
    out = np.zeros((n, 6), dtype=np.int32)
    m.votes[2, 64](p, out)
    for w in range(n // 32):
        bits = p[w * 32:(w + 1) * 32] != 0
        ballot = int(sum(1 << k for k in range(32) if bits[k]))
        expected = [int(bits.all()), int(bits.any()), int(bits.all() or not bits.any()),
                    np.array(ballot, dtype=np.uint32).view(np.int32), 0, int(bits.all())]
        expected[4] = expected[3]
        got = out[w * 32:(w + 1) * 32]
        names = ["all_sync", "any_sync", "eq_sync", "ballot_sync", "ballot_sync(bool)",
                 "all_sync(bool)"]
        for k, name in enumerate(names):
            assert (got[:, k] == expected[k]).all(), (
                f"{name} in warp {w} with {pattern} predicates: "
                f"{sorted(set(got[:, k].tolist()))}, expected {expected[k]}"
            )


def test_votes_with_partial_masks(m):
    n = 64
    p = np.random.default_rng(23).integers(0, 2, n).astype(np.int32)
    p[0:16] = 1  # the first half-warp agrees
    out = np.zeros((n, 4), dtype=np.int32)
    m.votes_partial_mask[1, n](p, out)
    for i in range(n):
        half = (i % 32) // 16
        lanes = range((i - i % 32) + 16 * half, (i - i % 32) + 16 * half + 16)
        bits = [p[j] != 0 for j in lanes]
        ballot = sum(1 << (j % 32) for j in lanes if p[j])
        expected = [np.array(ballot, dtype=np.uint32).view(np.int32), all(bits), any(bits),
                    all(bits) or not any(bits)]
        assert list(out[i]) == [int(e) for e in expected], (
            f"thread {i}: ballot/all/any/eq over half-warp {half} gave {list(out[i])}, "
            f"expected {[int(e) for e in expected]}"
        )


@pytest.mark.parametrize("dtype", SHFL_TYPES)
def test_match_any_and_all(m, dtype):
    n = 96
    lane = np.arange(n) % 32
    base = values_for(dtype, 4)
    x = base[lane % 4]
    if dtype == "int64":
        # Equal low halves, different high halves: must not match.
        x = (lane % 4).astype(np.int64) << 32
    x[64:] = base[1]  # the third warp agrees everywhere
    out = np.zeros((n, 3), dtype=np.int32)
    m.match[1, n](x, out)
    for i in range(n):
        w = i // 32
        same = sum(1 << j for j in range(32) if x[w * 32 + j] == x[i])
        assert out[i, 0] == np.array(same, dtype=np.uint32).view(np.int32), (
            f"match_any_sync {dtype} lane {i}: {out[i, 0] & 0xffffffff:#x}, expected {same:#x}"
        )
        agree = w == 2
        assert (out[i, 1], out[i, 2]) == ((-1, 1) if agree else (0, 0)), (
            f"match_all_sync {dtype} lane {i}: ({out[i, 1] & 0xffffffff:#x}, {out[i, 2]})"
        )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_match_compares_float_bits(m, dtype):
    # 0.0 and -0.0 are equal numbers with different bits; a NaN has the
    # same bits as itself. match.sync compares bits.
    x = np.zeros(32, dtype=dtype)
    x[1::2] = -0.0
    x[:4] = np.nan
    out = np.zeros((32, 3), dtype=np.int32)
    m.match[1, 32](x, out)
    nan_lanes, neg = 0xF, sum(1 << j for j in range(5, 32, 2))
    pos = 0xFFFFFFFF & ~nan_lanes & ~neg
    for i in range(32):
        expected = nan_lanes if i < 4 else neg if i % 2 else pos
        got = int(out[i, 0]) & 0xFFFFFFFF
        assert got == expected, (
            f"match_any_sync {dtype} lane {i} ({x[i]!r}): {got:#x}, "
            f"expected {expected:#x}"
        )


@pytest.mark.parametrize("block", [(32, 1), (8, 4), (5, 7), (16, 3)])
def test_laneid_warpsize_lanemask(m, block):
    blocks = 2
    threads = block[0] * block[1]
    out = np.zeros((blocks * threads, 4), dtype=np.uint32)
    m.lane_info[blocks, block](out)
    linear = np.tile(np.arange(threads), blocks)
    lane = linear % 32
    np.testing.assert_array_equal(out[:, 0], lane, err_msg=f"laneid in blocks {block}")
    np.testing.assert_array_equal(out[:, 1], 32, err_msg="warpsize")
    np.testing.assert_array_equal(out[:, 2], (1 << lane.astype(np.uint64)) - 1,
                                  err_msg=f"lanemask_lt in blocks {block}")
    first = linear - lane
    live = np.minimum(32, threads - first).astype(np.uint64)
    np.testing.assert_array_equal(out[:, 3], ((1 << live) - 1).astype(np.uint32),
                                  err_msg=f"activemask in blocks {block} ({threads} threads)")


def test_syncwarp_orders_shared_memory(m):
    x = np.arange(128, dtype=np.int32) * 3
    out = np.zeros_like(x)
    m.warp_reverse_syncwarp[1, 128](x, out)
    rev = x.reshape(4, 32)[:, ::-1]
    expected = rev.copy()
    expected[:, :16] = rev[:, :16][:, ::-1]
    np.testing.assert_array_equal(out, expected.reshape(-1),
                                  err_msg="warp-synchronous reversal ordered by syncwarp")


def test_shfl_with_partial_masks(m):
    x = np.arange(64, dtype=np.int32) * 10
    out = np.zeros_like(x)
    m.shfl_partial_mask[1, 64](x, out)
    expected = np.empty_like(x)
    for i in range(64):
        lane, base = i % 32, i - i % 32
        expected[i] = x[base + (lane + 1) % 16] if lane < 16 else x[base + 31]
    np.testing.assert_array_equal(out, expected, err_msg="shfl_sync within half-warp masks")


def test_shfl_among_lanes_left_after_others_exit(m):
    x = np.arange(64, dtype=np.int32) + 100
    out = np.full(64, -1, dtype=np.int32)
    m.shfl_after_exit[1, 64](x, out)
    expected = np.full(64, -1, dtype=np.int32)
    for i in range(0, 64, 2):
        expected[i] = x[i - i % 32 + (i % 32 + 2) % 32]
    np.testing.assert_array_equal(out, expected, err_msg="shfl_sync over the even lanes")


def test_shuffle_of_other_types_is_rejected(tmp_path):
    source = """
from numba import cuda, uint32, void

@cuda.jit(void(uint32[::1]))
def k(x):
    x[0] = cuda.shfl_sync(0xffffffff, x[1], 0)
"""
    with pytest.raises(kiln_cpu.CompileError) as error:
        kiln_cpu.compile_source(source, tmp_path)
    message = str(error.value)
    assert "shfl_sync" in message and "int32, int64, float32 or float64" in message, (
        f"a shuffle of uint32 (which Numba rejects) must say which types work: {error.value}"
    )


def test_activemask_in_divergent_branches(m):
    out = np.zeros((64, 3), dtype=np.uint32)
    m.activemask_divergent[1, 64](out)
    taken = sum(1 << k for k in range(32) if k % 3 == 0)
    for i in range(64):
        branch = 0 if i % 32 % 3 == 0 else 1
        expected = taken if branch == 0 else 0xFFFFFFFF & ~taken
        assert out[i, branch] == expected, (
            f"activemask() of lane {i % 32} in branch {branch}: {int(out[i, branch]):#x}, "
            f"expected the lanes of its branch {expected:#x}"
        )
        assert out[i, 2] == 0xFFFFFFFF, f"activemask() after the if/else: {int(out[i, 2]):#x}"


def test_warp_aggregated_atomic(m):
    n = 256
    flags = (np.random.default_rng(24).random(n) < 0.3).astype(np.int32)
    flags[0] = 0  # lane 0 of the first warp must not be taken for the leader
    counter = np.zeros(1, dtype=np.int32)
    slots = np.full(n, -1, dtype=np.int32)
    m.warp_aggregated_increment[2, 128](flags, counter, slots)
    assert counter[0] == flags.sum(), f"counter {counter[0]}, expected {flags.sum()}"
    taken = slots[flags != 0]
    np.testing.assert_array_equal(np.sort(taken), np.arange(flags.sum()),
                                  err_msg="each flagged lane must get a unique slot")
    assert (slots[flags == 0] == -1).all()


def test_an_integer_literal_shuffles_as_an_int64(m):
    out = np.zeros(64, np.int64)
    m.shfl_literal[1, 64](out)
    np.testing.assert_array_equal(out, np.full(64, (1 << 40) + 7), err_msg="literal shuffles")
