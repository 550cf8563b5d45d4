"""Every cuda.atomic operation on every element type the language reference
lists, on the CPU engine: contention (many threads on one element, across
blocks that run on several host threads), the old values returned, 1-D and
multi-dimensional indices, shared and global arrays, and the NaN rules of
float max/min/nanmax/nanmin as numba-cuda defines them (cudadrv/nvvm.py).
"""

import math

import numpy as np
import pytest

import kiln_cpu

ALL = ["int32", "uint32", "int64", "uint64", "float32", "float64"]
INTEGERS = ["int32", "uint32", "int64", "uint64"]
UNSIGNED = ["uint32", "uint64"]
FLOATS = ["float32", "float64"]


def sigs(pattern, dtypes):
    """A @cuda.jit signature list: `pattern` with T replaced by each dtype."""
    return "[" + ", ".join(repr(pattern.replace("T", t)) for t in dtypes) + "]"


SHARED_TICKET = """
@cuda.jit(void(ELT[::1], ELT[::1]))
def shared_ticket_ELT(olds, totals):
    # tickets from atomic.add on a shared counter; the block's total and a
    # max/min over the tickets through shared atomics too.
    counter = cuda.shared.array(3, ELT)
    tid = cuda.threadIdx.x
    if tid == 0:
        counter[0] = 0
        counter[1] = 0
        counter[2] = 1000000
    cuda.syncthreads()
    ticket = cuda.atomic.add(counter, 0, 1)
    cuda.atomic.max(counter, 1, ticket)
    cuda.atomic.min(counter, 2, ticket)
    olds[cuda.grid(1)] = ticket
    cuda.syncthreads()
    if tid == 0:
        b = cuda.blockIdx.x * 3
        totals[b] = counter[0]
        totals[b + 1] = counter[1]
        totals[b + 2] = counter[2]

"""

SHARED_BITS = """
@cuda.jit(void(ELT[::1], ELT[::1], ELT[::1]))
def shared_bits_ELT(values, start, out):
    # and/or/xor/exch/cas on shared memory, by every thread of the block.
    acc = cuda.shared.array(5, ELT)
    tid = cuda.threadIdx.x
    if tid < 5:
        acc[tid] = start[tid]
    cuda.syncthreads()
    v = values[tid]
    cuda.atomic.and_(acc, 0, ~v)
    cuda.atomic.or_(acc, 1, v)
    cuda.atomic.xor(acc, 2, v)
    cuda.atomic.exch(acc, 3, v)
    while True:
        seen = acc[4]
        if cuda.atomic.cas(acc, 4, seen, seen + v) == seen:
            break
    cuda.syncthreads()
    if tid < 5:
        out[tid] = acc[tid]

"""

SOURCE = f'''
import math

from numba import cuda, float32, float64, int32, int64, uint32, uint64, void

NBINS = 16


@cuda.jit({sigs("void(T[::1], T[::1])", ALL)})
def add_ticket(counter, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.add(counter, 0, 1)


@cuda.jit({sigs("void(T[::1], T[::1])", ALL)})
def sub_ticket(counter, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.sub(counter, 0, 1)


@cuda.jit({sigs("void(T[::1], int64[::1], T[::1], T[::1])", ALL)})
def add_scattered(arr, index, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.add(arr, index[i], values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", INTEGERS)})
def and_bits(arr, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.and_(arr, i % arr.size, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", INTEGERS)})
def or_bits(arr, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.or_(arr, i % arr.size, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", INTEGERS)})
def xor_bits(arr, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.xor(arr, i % arr.size, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", INTEGERS)})
def exch_values(arr, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.exch(arr, 0, values[i])


@cuda.jit({sigs("void(T[::1], T, T[::1])", UNSIGNED)})
def inc_contended(arr, limit, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.inc(arr, 0, limit)


@cuda.jit({sigs("void(T[::1], T, T[::1])", UNSIGNED)})
def dec_contended(arr, limit, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.dec(arr, 0, limit)


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", UNSIGNED)})
def inc_each(arr, limits, olds):
    i = cuda.grid(1)
    if i < arr.size:
        olds[i] = cuda.atomic.inc(arr, i, limits[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", UNSIGNED)})
def dec_each(arr, limits, olds):
    i = cuda.grid(1)
    if i < arr.size:
        olds[i] = cuda.atomic.dec(arr, i, limits[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", ALL)})
def max_contended(arr, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.max(arr, 0, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", ALL)})
def min_contended(arr, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.min(arr, 0, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", ALL)})
def nanmax_contended(arr, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.nanmax(arr, 0, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", ALL)})
def nanmin_contended(arr, values, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.nanmin(arr, 0, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", FLOATS)})
def max_each(arr, values, olds):
    i = cuda.grid(1)
    if i < arr.size:
        olds[i] = cuda.atomic.max(arr, i, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", FLOATS)})
def min_each(arr, values, olds):
    i = cuda.grid(1)
    if i < arr.size:
        olds[i] = cuda.atomic.min(arr, i, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", FLOATS)})
def nanmax_each(arr, values, olds):
    i = cuda.grid(1)
    if i < arr.size:
        olds[i] = cuda.atomic.nanmax(arr, i, values[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1])", FLOATS)})
def nanmin_each(arr, values, olds):
    i = cuda.grid(1)
    if i < arr.size:
        olds[i] = cuda.atomic.nanmin(arr, i, values[i])


@cuda.jit({sigs("void(T[::1], T[::1])", INTEGERS)})
def cas_counter(counter, olds):
    """An increment built from a compare-and-swap retry loop."""
    i = cuda.grid(1)
    if i < olds.size:
        while True:
            seen = counter[0]
            got = cuda.atomic.cas(counter, 0, seen, seen + 1)
            if got == seen:
                olds[i] = got
                break


@cuda.jit({sigs("void(T[::1], T[::1])", INTEGERS)})
def compare_and_swap_counter(counter, olds):
    i = cuda.grid(1)
    if i < olds.size:
        while True:
            seen = counter[0]
            got = cuda.atomic.compare_and_swap(counter, seen, seen + 1)
            if got == seen:
                olds[i] = got
                break


@cuda.jit({sigs("void(T[::1], T[::1], T[::1], T[::1])", INTEGERS)})
def cas_each(arr, expected, replacement, olds):
    i = cuda.grid(1)
    if i < arr.size:
        olds[i] = cuda.atomic.cas(arr, i, expected[i], replacement[i])


@cuda.jit({sigs("void(T[:, ::1], T[:, ::1])", ALL)})
def add_2d(arr, olds):
    """Every thread of a 2-D grid adds 1 to arr[i % rows, j % cols]."""
    i, j = cuda.grid(2)
    if i < olds.shape[0] and j < olds.shape[1]:
        olds[i, j] = cuda.atomic.add(arr, (i % arr.shape[0], j % arr.shape[1]), 1)


@cuda.jit({sigs("void(T[:, :, ::1], T[::1])", ["int32", "uint64", "float64"])})
def max_3d(arr, values):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.max(arr, (i % 2, (i // 2) % 3, (i // 6) % 4), values[i])


@cuda.jit({sigs("void(T[:, ::1], T[::1])", INTEGERS)})
def cas_2d(arr, olds):
    """cas at a tuple index: each thread bumps its cell arr[i % 2, i % 3]."""
    i = cuda.grid(1)
    if i < olds.size:
        r = i % 2
        c = i % 3
        while True:
            seen = arr[r, c]
            got = cuda.atomic.cas(arr, (r, c), seen, seen + 1)
            if got == seen:
                olds[i] = got
                break


@cuda.jit(void(int32[:, ::1]))
def exch_and_xor_2d(arr):
    i = cuda.grid(1)
    if i < 64:
        cuda.atomic.xor(arr, (i % 4, 1), 1 << (i // 4))
        cuda.atomic.or_(arr, (i % 4, 2), 1 << (i % 16))
    if i == 0:
        cuda.atomic.exch(arr, (3, 0), 77)


@cuda.jit(void(int32[::1], int32[::1]))
def negative_index(arr, olds):
    i = cuda.grid(1)
    if i < olds.size:
        olds[i] = cuda.atomic.add(arr, -1, 1)


@cuda.jit(void(int32[:, :], int32[:, :]))
def add_strided(arr, olds):
    """Atomics through strides: arr is a non-contiguous view, and row is a
    view taken inside the kernel."""
    i, j = cuda.grid(2)
    if i < olds.shape[0] and j < olds.shape[1]:
        olds[i, j] = cuda.atomic.add(arr, (i % (arr.shape[0] - 1), j % arr.shape[1]), 1)
        row = arr[arr.shape[0] - 1]
        cuda.atomic.max(row, j % arr.shape[1], i)


@cuda.jit(void(int64[:, ::1], int32[::1], uint64[::1]))
def index_types(arr, small, big):
    """Indices of other integer types, and negative indices per dimension."""
    i = cuda.grid(1)
    if i < small.size:
        cuda.atomic.add(arr, (small[i], big[i]), 1)
        cuda.atomic.add(arr, (-1, -small[i] - 1), 10)


@cuda.jit(void(float64[::1], float64[:, ::1], float64[::1]))
def float_and_bool_indices(flat, grid, x):
    """Numba casts an atomic's indices to intp: floats truncate, booleans
    are 0 and 1 (math.floor is a float on the GPU)."""
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(flat, x[i], 1.0)
        cuda.atomic.add(grid, (x[i] > 0, math.floor(x[i])), 1.0)


@cuda.jit(void(float32[::1], float32, float32, int32[::1]))
def histogram_shared(x, lo, hi, hist):
    """Per-block histogram with shared-memory atomics, flushed to global
    memory with global atomics."""
    local = cuda.shared.array(NBINS, int32)
    tid = cuda.threadIdx.x
    if tid < NBINS:
        local[tid] = 0
    cuda.syncthreads()
    width = (hi - lo) / NBINS
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        b = int32((x[i] - lo) / width)
        if b >= 0 and b < NBINS:
            cuda.atomic.add(local, b, 1)
    cuda.syncthreads()
    if tid < NBINS:
        cuda.atomic.add(hist, tid, local[tid])


{"".join(SHARED_TICKET.replace("ELT", t) for t in ALL)}
{"".join(SHARED_BITS.replace("ELT", t) for t in INTEGERS)}
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("atomics"))


N = 4096  # threads contending, in 32 blocks of 128
GRID, BLOCK = 32, 128


def launch(kernel, n, *args):
    blocks = (n + BLOCK - 1) // BLOCK
    kernel[blocks, BLOCK](*args)


# --- add / sub --------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
def test_add_gives_every_thread_a_unique_ticket(m, dtype):
    counter = np.zeros(1, dtype=dtype)
    olds = np.zeros(N, dtype=dtype)
    launch(m.add_ticket, N, counter, olds)
    assert counter[0] == N, f"atomic.add {dtype}: counter is {counter[0]} after {N} increments"
    np.testing.assert_array_equal(np.sort(olds), np.arange(N, dtype=dtype),
                                  err_msg=f"atomic.add {dtype}: old values are not unique tickets")


@pytest.mark.parametrize("dtype", ALL)
def test_sub_counts_down(m, dtype):
    counter = np.full(1, N, dtype=dtype)
    olds = np.zeros(N, dtype=dtype)
    launch(m.sub_ticket, N, counter, olds)
    assert counter[0] == 0, f"atomic.sub {dtype}: counter is {counter[0]}, not 0"
    np.testing.assert_array_equal(np.sort(olds), np.arange(1, N + 1, dtype=dtype),
                                  err_msg=f"atomic.sub {dtype}: old values")


@pytest.mark.parametrize("dtype", ALL)
def test_add_scattered_matches_np_add_at(m, dtype):
    rng = np.random.default_rng(11)
    size = 37
    index = rng.integers(0, size, N).astype(np.int64)
    if dtype.startswith("float"):
        values = rng.integers(-64, 64, N).astype(dtype) / 4  # exact sums
    elif dtype.startswith("u"):
        values = rng.integers(0, 1 << 20, N).astype(dtype)
    else:
        values = rng.integers(-(1 << 20), 1 << 20, N).astype(dtype)
    arr = np.zeros(size, dtype=dtype)
    olds = np.zeros(N, dtype=dtype)
    launch(m.add_scattered, N, arr, index, values, olds)
    expected = np.zeros(size, dtype=dtype)
    np.add.at(expected, index, values)
    np.testing.assert_array_equal(arr, expected, err_msg=f"atomic.add {dtype} at scattered indices")
    # Per element, the old values plus the value added are a chain from 0
    # to the final value: their sum equals the sum of partial sums.
    for e in range(size):
        mine = index == e
        news = olds[mine] + values[mine]
        chain = np.sort(np.concatenate([olds[mine], [expected[e]]]))
        assert np.array_equal(chain, np.sort(np.concatenate([[0], news]).astype(dtype))), (
            f"atomic.add {dtype}: old values at element {e} are not a chain of partial sums"
        )


def test_add_wraps_around_like_the_element_type(m):
    counter = np.array([np.iinfo(np.int32).max - 10], dtype=np.int32)
    olds = np.zeros(20, dtype=np.int32)
    m.add_ticket[1, 20](counter, olds)
    assert counter[0] == np.int32(np.iinfo(np.int32).min + 9), (
        f"int32 atomic.add past the maximum gave {counter[0]}"
    )
    counter = np.array([5], dtype=np.uint64)
    olds = np.zeros(10, dtype=np.uint64)
    m.sub_ticket[1, 10](counter, olds)
    assert counter[0] == np.uint64(2**64 - 5), f"uint64 atomic.sub below 0 gave {counter[0]}"


# --- and / or / xor / exch --------------------------------------------------


def bits_of(dtype):
    return np.dtype(dtype).itemsize * 8


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("op", ["and", "or", "xor"])
def test_bitwise_with_one_bit_per_thread(m, dtype, op):
    # Element e is hit by threads e, e + 4, ...: each of them owns one bit.
    elements = 4
    bits = bits_of(dtype)
    n = elements * bits
    lanes = np.arange(n)
    mine = (np.ones(1, dtype=np.uint64) << (lanes // elements).astype(np.uint64)).astype(dtype)
    if op == "and":
        values = ~mine
        arr = np.full(elements, -1).astype(dtype)
    else:
        values = mine
        arr = np.zeros(elements, dtype=dtype)
        if op == "xor":
            arr[:] = np.array(0x5A5A5A5A, dtype=np.uint64).astype(dtype)
    start = arr.copy()
    olds = np.zeros(n, dtype=dtype)
    kernel = {"and": m.and_bits, "or": m.or_bits, "xor": m.xor_bits}[op]
    launch(kernel, n, arr, values, olds)
    reduce = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    for e in range(elements):
        expected = reduce.reduce(np.concatenate([start[e:e + 1], values[e::elements]]))
        assert arr[e] == expected, (
            f"atomic.{op} {dtype}: element {e} is {arr[e]:#x}, not {expected:#x}"
        )
        # Each thread saw its own bit as it was at the start (untouched).
        own = olds[e::elements] & mine[e::elements]
        assert np.array_equal(own, start[e] & mine[e::elements]), (
            f"atomic.{op} {dtype}: a thread's old value shows its own bit already changed"
        )
        # The old values are a chain: each one changed a different number of
        # bits from the start.
        changed = [bin(int(x)).count("1") for x in (olds[e::elements] ^ start[e])]
        assert sorted(changed) == list(range(bits)), (
            f"atomic.{op} {dtype}: old values are not a chain of single-bit changes"
        )


@pytest.mark.parametrize("dtype", INTEGERS)
def test_exch_returns_every_value_once(m, dtype):
    n = 1000
    values = (np.arange(n) + 7).astype(dtype)
    arr = np.array([3], dtype=dtype)
    olds = np.zeros(n, dtype=dtype)
    launch(m.exch_values, n, arr, values, olds)
    seen = np.sort(np.concatenate([olds, arr]))
    np.testing.assert_array_equal(
        seen, np.sort(np.concatenate([[3], values]).astype(dtype)),
        err_msg=f"atomic.exch {dtype}: the old values and the final value must be the "
                "start value and every value written, each once")


# --- inc / dec --------------------------------------------------------------


def inc_model(old, limit):
    return 0 if old >= limit else old + 1


def dec_model(old, limit):
    return limit if old == 0 or old > limit else old - 1


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("op", ["inc", "dec"])
def test_inc_dec_each_case(m, dtype, op):
    top = int(np.iinfo(dtype).max)
    pairs = [(0, 10), (5, 10), (9, 10), (10, 10), (11, 10), (top, 10), (0, 0), (3, 0),
             (top, top), (top - 1, top), (0, top), (7, 1)]
    arr = np.array([p[0] for p in pairs], dtype=dtype)
    limits = np.array([p[1] for p in pairs], dtype=dtype)
    olds = np.zeros_like(arr)
    kernel = m.inc_each if op == "inc" else m.dec_each
    kernel[1, 32](arr, limits, olds)
    model = inc_model if op == "inc" else dec_model
    for k, (old, limit) in enumerate(pairs):
        assert (olds[k], arr[k]) == (old, model(old, limit)), (
            f"atomic.{op} {dtype} of {old} with limit {limit}: gave memory {arr[k]} "
            f"(expected {model(old, limit)}), old {olds[k]}"
        )


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_inc_wraps_under_contention(m, dtype):
    limit = 99
    arr = np.zeros(1, dtype=dtype)
    olds = np.zeros(N, dtype=dtype)
    m.inc_contended[GRID, BLOCK](arr, np.dtype(dtype).type(limit), olds)
    assert arr[0] == N % (limit + 1), f"atomic.inc {dtype}: memory {arr[0]}"
    np.testing.assert_array_equal(
        np.sort(olds), np.sort(np.arange(N) % (limit + 1)).astype(dtype),
        err_msg=f"atomic.inc {dtype}: old values must count 0..{limit} round and round")


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_dec_wraps_under_contention(m, dtype):
    limit = 99
    arr = np.full(1, 50, dtype=dtype)
    olds = np.zeros(N, dtype=dtype)
    m.dec_contended[GRID, BLOCK](arr, np.dtype(dtype).type(limit), olds)
    sequence = [50]
    for _ in range(N):
        sequence.append(dec_model(sequence[-1], limit))
    assert arr[0] == sequence[-1], f"atomic.dec {dtype}: memory {arr[0]}, not {sequence[-1]}"
    np.testing.assert_array_equal(np.sort(olds), np.sort(np.array(sequence[:-1], dtype=dtype)),
                                  err_msg=f"atomic.dec {dtype}: old values")


# --- max / min / nanmax / nanmin --------------------------------------------


def spread_values(dtype, n, rng):
    """n distinct values over the whole range of dtype (both signs, high
    bits of unsigned types), shuffled."""
    if dtype.startswith("float"):
        values = np.linspace(-1e6, 1e6, n).astype(dtype)
    else:
        info = np.iinfo(dtype)
        values = np.linspace(float(info.min) / 2, float(info.max) * 0.999, n).astype(dtype)
        values = np.unique(values)
    rng.shuffle(values)
    return values


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["max", "min", "nanmax", "nanmin"])
def test_max_min_under_contention(m, dtype, op):
    rng = np.random.default_rng(12)
    values = spread_values(dtype, N, rng)
    is_max = op.endswith("max")
    start = np.array([values[0]], dtype=dtype)
    arr = start.copy()
    olds = np.zeros(values.size, dtype=dtype)
    kernel = getattr(m, f"{op}_contended")
    launch(kernel, values.size, arr, values, olds)
    expected = values.max() if is_max else values.min()
    assert arr[0] == expected, f"atomic.{op} {dtype}: memory {arr[0]}, expected {expected}"
    # Every old value is one that memory held: the start or a value written,
    # and never beyond the final one.
    allowed = set(values.tolist())
    assert set(olds.tolist()) <= allowed, f"atomic.{op} {dtype}: an old value memory never held"
    assert (olds <= expected).all() if is_max else (olds >= expected).all(), (
        f"atomic.{op} {dtype}: an old value beyond the final {'max' if is_max else 'min'}"
    )


def minmax_model(op, old, value):
    """numba-cuda's float atomic max/min (cudadrv/nvvm.py): the new memory."""
    if op in ("max", "min"):
        if math.isnan(old) or math.isnan(value):
            return old
        better = value > old if op == "max" else value < old
        return value if better else old
    if math.isnan(value):
        return old
    if math.isnan(old):
        return value
    better = value > old if op == "nanmax" else value < old
    return value if better else old


NAN = float("nan")
INF = float("inf")
MINMAX_CASES = [
    (1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (-3.5, -7.25),
    (NAN, 1.0), (1.0, NAN), (NAN, NAN),
    (0.0, -0.0), (-0.0, 0.0),
    (-INF, 5.0), (INF, 5.0), (5.0, INF), (5.0, -INF), (NAN, -INF), (INF, NAN),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["max", "min", "nanmax", "nanmin"])
def test_float_max_min_nan_rules(m, dtype, op):
    arr = np.array([c[0] for c in MINMAX_CASES], dtype=dtype)
    values = np.array([c[1] for c in MINMAX_CASES], dtype=dtype)
    olds = np.zeros_like(arr)
    start = arr.copy()
    getattr(m, f"{op}_each")[1, 32](arr, values, olds)
    for k, (old, value) in enumerate(MINMAX_CASES):
        expected = np.array(minmax_model(op, old, value), dtype=dtype)
        same = np.array_equal(arr[k:k + 1].view(f"u{arr.itemsize}"),
                              expected.reshape(1).view(f"u{arr.itemsize}"))
        assert same or (np.isnan(arr[k]) and np.isnan(expected)), (
            f"atomic.{op} {dtype} with memory {old!r} and value {value!r}: memory became "
            f"{arr[k]!r}, numba-cuda gives {float(expected)!r}"
        )
        assert np.array_equal(olds[k:k + 1], start[k:k + 1], equal_nan=True), (
            f"atomic.{op} {dtype} with memory {old!r} and value {value!r}: returned "
            f"{olds[k]!r}, not the old value"
        )


@pytest.mark.parametrize("dtype", FLOATS)
def test_nanmax_replaces_nan_under_contention(m, dtype):
    values = np.arange(N, dtype=dtype)
    values[::7] = np.nan
    arr = np.array([np.nan], dtype=dtype)
    olds = np.zeros(N, dtype=dtype)
    launch(m.nanmax_contended, N, arr, values, olds)
    top = np.nanmax(values)
    assert arr[0] == top, f"atomic.nanmax {dtype}: memory {arr[0]}, expected {top}"
    arr = np.array([np.nan], dtype=dtype)
    launch(m.nanmin_contended, N, arr, values, olds)
    assert arr[0] == np.nanmin(values), f"atomic.nanmin {dtype}: memory {arr[0]}"
    arr = np.array([5.0], dtype=dtype)
    launch(m.max_contended, N, arr, values, olds)
    assert arr[0] == top, f"atomic.max {dtype} must skip NaN values: memory {arr[0]}"
    arr = np.array([np.nan], dtype=dtype)
    launch(m.max_contended, N, arr, values, olds)
    assert np.isnan(arr[0]), f"atomic.max {dtype} must leave a NaN in memory: memory {arr[0]}"


# --- cas / compare_and_swap -------------------------------------------------


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("which", ["cas", "compare_and_swap"])
def test_cas_loop_counter(m, dtype, which):
    counter = np.zeros(1, dtype=dtype)
    olds = np.zeros(N, dtype=dtype)
    kernel = m.cas_counter if which == "cas" else m.compare_and_swap_counter
    launch(kernel, N, counter, olds)
    assert counter[0] == N, f"{which} {dtype} counter is {counter[0]}"
    np.testing.assert_array_equal(np.sort(olds), np.arange(N, dtype=dtype),
                                  err_msg=f"{which} {dtype}: tickets of the retry loop")


@pytest.mark.parametrize("dtype", INTEGERS)
def test_cas_swaps_only_when_equal(m, dtype):
    top = np.iinfo(dtype).max
    arr = np.array([1, 2, top, 0, 5], dtype=dtype)
    expected = np.array([1, 3, top, 1, 6], dtype=dtype)
    replacement = np.array([10, 20, 30, 40, 50], dtype=dtype)
    olds = np.zeros_like(arr)
    start = arr.copy()
    m.cas_each[1, 32](arr, expected, replacement, olds)
    np.testing.assert_array_equal(olds, start, err_msg=f"cas {dtype}: returned old values")
    np.testing.assert_array_equal(arr, np.where(start == expected, replacement, start),
                                  err_msg=f"cas {dtype}: memory after the swap")


# --- indices ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
def test_add_at_2d_index(m, dtype):
    rows, cols = 40, 50
    arr = np.zeros((3, 5), dtype=dtype)
    olds = np.zeros((rows, cols), dtype=dtype)
    m.add_2d[(3, 4), (16, 16)](arr, olds)
    expected = np.zeros((3, 5), dtype=dtype)
    np.add.at(expected, (np.arange(rows)[:, None] % 3, np.arange(cols)[None, :] % 5), 1)
    np.testing.assert_array_equal(arr, expected, err_msg=f"atomic.add {dtype} at (i, j)")
    for r in range(3):
        for c in range(5):
            mine = olds[r::3, c::5].reshape(-1)
            np.testing.assert_array_equal(
                np.sort(mine), np.arange(mine.size, dtype=dtype),
                err_msg=f"atomic.add {dtype}: tickets at element ({r}, {c})")


@pytest.mark.parametrize("dtype", ["int32", "uint64", "float64"])
def test_max_at_3d_index(m, dtype):
    n = 24 * 50
    values = spread_values(dtype, n, np.random.default_rng(13))[:n]
    arr = np.zeros((2, 3, 4), dtype=dtype)
    if not dtype.startswith("u"):
        arr[:] = -(10**6)
    start = arr.copy()
    launch(m.max_3d, values.size, arr, values)
    expected = start.copy()
    i = np.arange(values.size)
    np.maximum.at(expected, (i % 2, (i // 2) % 3, (i // 6) % 4), values)
    np.testing.assert_array_equal(arr, expected, err_msg=f"atomic.max {dtype} at (i, j, k)")


@pytest.mark.parametrize("dtype", INTEGERS)
def test_cas_at_2d_index(m, dtype):
    n = 600
    arr = np.zeros((2, 3), dtype=dtype)
    olds = np.zeros(n, dtype=dtype)
    launch(m.cas_2d, n, arr, olds)
    np.testing.assert_array_equal(arr, np.full((2, 3), n // 6, dtype=dtype),
                                  err_msg=f"cas {dtype} at (i, j)")
    i = np.arange(n)
    for r in range(2):
        for c in range(3):
            mine = olds[(i % 2 == r) & (i % 3 == c)]
            np.testing.assert_array_equal(np.sort(mine), np.arange(mine.size, dtype=dtype),
                                          err_msg=f"cas {dtype}: tickets at ({r}, {c})")


def test_bitwise_and_exch_at_2d_index(m):
    arr = np.zeros((4, 3), dtype=np.int32)
    m.exch_and_xor_2d[1, 64](arr)
    expected = np.zeros((4, 3), dtype=np.int32)
    expected[:, 1] = 0xFFFF
    for i in range(64):
        expected[i % 4, 2] |= 1 << (i % 16)
    expected[3, 0] = 77
    np.testing.assert_array_equal(arr, expected, err_msg="xor/or/exch at 2-D indices")


def test_negative_index_wraps_around(m):
    arr = np.zeros(5, dtype=np.int32)
    olds = np.zeros(100, dtype=np.int32)
    m.negative_index[1, 100](arr, olds)
    np.testing.assert_array_equal(arr, [0, 0, 0, 0, 100],
                                  err_msg="atomic.add(arr, -1, ...) must hit the last element")


def test_atomics_through_strided_views(m):
    base = np.zeros((6, 10), dtype=np.int32)
    arr = base[::2, 1::3]  # (3, 3), neither C nor F contiguous
    olds = np.zeros((9, 12), dtype=np.int32)
    m.add_strided[(1, 1), (16, 16)](arr, olds)
    expected = np.zeros((3, 3), dtype=np.int32)
    np.add.at(expected, (np.arange(9)[:, None] % 2, np.arange(12)[None, :] % 3), 1)
    expected[2] = 8
    np.testing.assert_array_equal(arr, expected, err_msg="atomics on a strided view")
    untouched = np.ones_like(base, dtype=bool)
    untouched[::2, 1::3] = False
    assert (base[untouched] == 0).all(), "atomics through strides wrote outside the view"


def test_index_types_and_negative_indices(m):
    arr = np.zeros((4, 5), dtype=np.int64)
    small = np.array([0, 1, 2, 3, 1], dtype=np.int32)
    big = np.array([4, 3, 0, 1, 3], dtype=np.uint64)
    m.index_types[1, 5](arr, small, big)
    expected = np.zeros((4, 5), dtype=np.int64)
    for s_, b_ in zip(small, big):
        expected[s_, b_] += 1
        expected[-1, -int(s_) - 1] += 10
    np.testing.assert_array_equal(arr, expected, err_msg="int32/uint64 and negative indices")


def test_float_and_bool_indices_are_cast_to_integers(m):
    x = np.array([0.5, 1.9, -1.5, 2.0, 3.7, -0.5])
    flat, grid = np.zeros(5), np.zeros((2, 5))
    m.float_and_bool_indices[1, 8](flat, grid, x)
    expected_flat, expected_grid = np.zeros(5), np.zeros((2, 5))
    for value in x:
        expected_flat[int(value)] += 1  # truncated toward zero, then wrapped
        expected_grid[int(value > 0), math.floor(value)] += 1
    np.testing.assert_array_equal(flat, expected_flat, err_msg="float indices of a 1-D array")
    np.testing.assert_array_equal(grid, expected_grid, err_msg="bool and float items of a tuple index")


# --- shared memory ----------------------------------------------------------


def test_histogram_in_shared_memory(m):
    x = np.random.default_rng(14).normal(size=20000).astype(np.float32)
    hist = np.zeros(16, dtype=np.int32)
    m.histogram_shared[8, 128](x, np.float32(-4), np.float32(4), hist)
    width = np.float32(8) / np.float32(16)
    bins = ((x - np.float32(-4)) / width).astype(np.int32)
    keep = (bins >= 0) & (bins < 16)
    expected = np.bincount(bins[keep], minlength=16)
    np.testing.assert_array_equal(hist, expected, err_msg="shared-memory histogram")


@pytest.mark.parametrize("dtype", ALL)
def test_atomics_on_shared_memory(m, dtype):
    blocks, threads = 3, 96
    olds = np.zeros(blocks * threads, dtype=dtype)
    totals = np.zeros(blocks * 3, dtype=dtype)
    getattr(m, f"shared_ticket_{dtype}")[blocks, threads](olds, totals)
    for b in range(blocks):
        np.testing.assert_array_equal(
            np.sort(olds[b * threads:(b + 1) * threads]), np.arange(threads, dtype=dtype),
            err_msg=f"atomic.add {dtype} on a shared counter: tickets of block {b}")
    np.testing.assert_array_equal(totals, np.tile([threads, threads - 1, 0], blocks).astype(dtype),
                                  err_msg=f"shared atomics {dtype}: count, max, min per block")


@pytest.mark.parametrize("dtype", INTEGERS)
def test_bitwise_and_cas_on_shared_memory(m, dtype):
    threads = 64
    rng = np.random.default_rng(15)
    values = rng.integers(0, 1 << 30, threads).astype(dtype)
    out = np.zeros(5, dtype=dtype)
    all_ones = np.array(-1).astype(dtype)
    start = np.array([all_ones, 0, 0, 0, 0], dtype=dtype)
    getattr(m, f"shared_bits_{dtype}")[1, threads](values, start, out)
    assert out[0] == np.bitwise_and.reduce(np.concatenate([[all_ones], ~values])), "shared and_"
    assert out[1] == np.bitwise_or.reduce(values), "shared or_"
    assert out[2] == np.bitwise_xor.reduce(values), "shared xor"
    assert out[3] in values, "shared exch: the final value must be one written"
    assert out[4] == values.sum(dtype=dtype), "shared cas retry-loop sum"
