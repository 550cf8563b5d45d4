"""Arrays, views, tuples, records, ranges and grids on the CPU engine.

Arrays: negative indices wrap around in every dimension; C, F and strided
(A) layouts of 1-D, 2-D and 3-D arrays; the attributes shape, size,
strides, ndim, T and len(); views made by slicing inside the kernel with
Python's rules for bounds (clamped, negative, reversed, empty, any step);
cuda.local.array in 1-D and 2-D. Tuples: constant and run-time indices
(negative too), unpacking, concatenation, comparison, iteration, tuple
arguments and tuples returned by device functions. Records: the fields of
xoroshiro128p_type elements. range() over every integer type, with negative
steps and spans near the ends of the type. 2-D and 3-D launches with
cuda.grid, cuda.gridsize and the index registers. Each result is checked
against NumPy or Python doing the same thing on the host.
"""

import itertools

import numpy as np
import pytest

import kiln_cpu

SOURCE = """
import numpy as np
from numba import cuda, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from numba.cuda.random import xoroshiro128p_type


@cuda.jit("void(float32[::1], float32[:, ::1], float32[:, :, ::1], int64[::1], float32[::1])")
def negative_indices(a, b, c, index, out):
    i = cuda.grid(1)
    if i < index.size:
        k = index[i]
        out[3 * i] = a[k]
        out[3 * i + 1] = b[k, -1 - k]
        out[3 * i + 2] = c[-1, k, k - 1]
        a[k] += 1000


@cuda.jit(["void(float32[:, ::1], float32[:, ::1], int64[::1])",
           "void(float32[::1, :], float32[:, ::1], int64[::1])",
           "void(float32[:, :], float32[:, ::1], int64[::1])"])
def copy_2d(a, out, info):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] * 2 + a.T[j, i] + (a[i - a.shape[0], j - a.shape[1]] - a[i, j])
    if i == 0 and j == 0:
        info[0] = a.shape[0]
        info[1] = a.shape[1]
        info[2] = a.strides[0]
        info[3] = a.strides[1]
        info[4] = a.size
        info[5] = a.ndim
        info[6] = len(a)
        info[7] = a.T.shape[0]
        info[8] = a.T.strides[0]
        info[9] = a.itemsize
        info[10] = a.nbytes


@cuda.jit(["void(float64[:, :, ::1], float64[:, :, ::1])",
           "void(float64[::1, :, :], float64[:, :, ::1])",
           "void(float64[:, :, :], float64[:, :, ::1])"])
def copy_3d(a, out):
    x, y, z = cuda.grid(3)
    if x < a.shape[0] and y < a.shape[1] and z < a.shape[2]:
        out[x, y, z] = a[x, y, z] + a.T[z, y, x] + a[x - a.shape[0], y, -a.shape[2] + z]


@cuda.jit("void(float32[::1], int64, int64, int64, float32[::1], int64[::1])")
def slice_1d(a, start, stop, step, out, info):
    # One thread: the view a[start:stop:step] and the fixed views below.
    v = a[start:stop:step]
    info[0] = v.shape[0]
    info[1] = v.strides[0]
    for k in range(v.size):
        out[k] = v[k]
    w = a[1:-1]
    info[2] = len(w)
    info[3] = w[0] * 10 + w[-1]
    r = a[::-1]
    info[4] = r[0] * 10 + r[-1]
    info[5] = r.strides[0]
    e = a[::2]
    info[6] = e.size
    info[7] = e[-1]
    t = a[-100:100]
    info[8] = t.size
    n = a[5:2]
    info[9] = n.size
    u = a[:3]
    info[10] = u[-1]
    s = a[-3:]
    info[11] = s[0]


@cuda.jit("void(float32[:, ::1], int64, int64, float32[::1], float32[::1], float32[:, ::1], int64[::1])")
def slice_2d(a, i, j, row, column, block, info):
    r = a[i, :]
    c = a[:, j]
    b = a[1:3, ::-2]
    info[0] = r.shape[0]
    info[1] = c.shape[0]
    info[2] = c.strides[0]
    info[3] = b.shape[0]
    info[4] = b.shape[1]
    info[5] = b.strides[0]
    info[6] = b.strides[1]
    for k in range(r.size):
        row[k] = r[k]
    for k in range(c.size):
        column[k] = c[k]
    for p in range(b.shape[0]):
        for q in range(b.shape[1]):
            block[p, q] = b[p, q]
    d = a[i]
    info[7] = d[j] == a[i, j]
    info[8] = a[-1][-1] == a[a.shape[0] - 1, a.shape[1] - 1]
    tt = a.T[::2, 1:]
    info[9] = tt.shape[0] * 100 + tt.shape[1]
    info[10] = tt[1, 0] == a[1, 2]


@cuda.jit("void(float64[::1], float64[:, ::1])")
def local_arrays(x, out):
    i = cuda.grid(1)
    if i < x.size:
        line = cuda.local.array(8, float64)
        grid = cuda.local.array((3, 4), dtype=np.int32)
        for k in range(8):
            line[k] = x[i] * k
        for p in range(3):
            for q in range(4):
                grid[p, q] = p * 10 + q + i
        total = 0.0
        for k in range(8):
            total += line[-1 - k] * (k + 1)
        out[i, 0] = total
        out[i, 1] = grid[-1, -1] + grid[1, 2]
        out[i, 2] = grid.shape[0] * 10 + grid.shape[1]
        out[i, 3] = grid.size + len(line)
        s = 0
        for row in grid:
            s += row[0]
        out[i, 4] = s


@cuda.jit(device=True)
def min_max(a, b):
    if a < b:
        return a, b
    return b, a


@cuda.jit(device=True)
def nested(x):
    return (x, (x * 2, x + 0.5))


@cuda.jit("void(UniTuple(float64, 3), Tuple((int32, float64)), int64[::1], float64[::1])")
def tuples(t, mixed, index, out):
    i = cuda.grid(1)
    if i < index.size:
        k = index[i]
        out[i * 16] = t[k]
        out[i * 16 + 1] = t[-1]
        out[i * 16 + 2] = mixed[0] + mixed[1]
        a, b, c = t
        out[i * 16 + 3] = a * 100 + b * 10 + c
        lo, hi = min_max(t[k], t[-1 - k])
        out[i * 16 + 4] = lo
        out[i * 16 + 5] = hi
        p, (q, r) = nested(t[k])
        out[i * 16 + 6] = p + q + r
        u = (int64(1), int64(2), int64(3)) + (int64(k),)
        out[i * 16 + 7] = u[-1] + u[k] + len(u)
        total = 0.0
        for v in t:
            total += v
        out[i * 16 + 8] = total
        out[i * 16 + 9] = (a, b) == (t[0], t[1])
        out[i * 16 + 10] = (a, b) < (b, a)
        s = (k, k + 1)
        out[i * 16 + 11] = s[0] * 10 + s[1]
        m = max(t)
        out[i * 16 + 12] = m
        out[i * 16 + 13] = t[k - 3]
        out[i * 16 + 14] = mixed[-1] * mixed[-2]
        out[i * 16 + 15] = len(t) + len(mixed)


@cuda.jit((xoroshiro128p_type[::1], uint64[::1]))
def records(states, out):
    i = cuda.grid(1)
    if i < states.size:
        r = states[i]
        out[4 * i] = r.s0
        out[4 * i + 1] = r["s1"]
        r.s0 = r.s0 + uint64(1)
        states[i]["s1"] = states[i]["s1"] ^ uint64(0xFF)
        out[4 * i + 2] = states[-1 - i].s0
        out[4 * i + 3] = states[i].s0


@cuda.jit((xoroshiro128p_type[::1],))
def copy_record(states):
    states[0] = states[1]


RANGE = '''
@cuda.jit("void(T[::1], int64[:, ::1])")
def ranges_T(bounds, out):
    i = cuda.grid(1)
    if 3 * i + 2 < bounds.size:
        start = bounds[3 * i]
        stop = bounds[3 * i + 1]
        step = bounds[3 * i + 2]
        count = 0
        for k in range(start, stop, step):
            if count == 0:
                out[i, 1] = k
            out[i, 2] = k
            count += 1
        out[i, 0] = count
        out[i, 3] = len(range(start, stop, step))
        out[i, 4] = len(range(start, stop))
'''


@cuda.jit("void(int64[:, :, ::1], int64[::1])")
def grid_3d(out, sizes):
    x, y, z = cuda.grid(3)
    gx, gy, gz = cuda.gridsize(3)
    if x < out.shape[2] and y < out.shape[1] and z < out.shape[0]:
        out[z, y, x] = (cuda.blockIdx.z * 100 + cuda.threadIdx.z) * 1000000 + (
            cuda.blockIdx.y * 100 + cuda.threadIdx.y) * 1000 + cuda.blockIdx.x * 100 + cuda.threadIdx.x
    if x == 0 and y == 0 and z == 0:
        sizes[0] = gx
        sizes[1] = gy
        sizes[2] = gz
        sizes[3] = cuda.blockDim.x * 100 + cuda.blockDim.y * 10 + cuda.blockDim.z
        sizes[4] = cuda.gridDim.x * 100 + cuda.gridDim.y * 10 + cuda.gridDim.z


@cuda.jit("void(int64[:, ::1], int64[::1])")
def grid_2d(out, sizes):
    x, y = cuda.grid(2)
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = y * out.shape[1] + x
    if x == 0 and y == 0:
        w, h = cuda.gridsize(2)
        sizes[0] = w
        sizes[1] = h
"""

RANGE_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def module_source():
    head, ranges = SOURCE.split("RANGE = '''")
    ranges, tail = ranges.split("'''", 1)
    parts = [head, tail]
    for t in RANGE_TYPES:
        parts.append(ranges.replace("T[", t + "[").replace("_T(", f"_{t}("))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return kiln_cpu.compile_source(module_source(), tmp_path_factory.mktemp("arrays"))


def test_negative_indices_wrap_around(kernels):
    a = np.arange(10, dtype=np.float32)
    b = np.arange(70, dtype=np.float32).reshape(7, 10)
    c = np.arange(4 * 7 * 9, dtype=np.float32).reshape(4, 7, 9)
    index = np.array([-1, -2, -7, 0, 4, 6, -5], dtype=np.int64)  # distinct elements of a
    out = np.zeros(3 * index.size, dtype=np.float32)
    expected_a = a.copy()
    kernels.negative_indices[1, 32](a, b, c, index, out)
    expected = []
    for k in index.tolist():
        expected += [expected_a[k], b[k, -1 - k], c[-1, k, k - 1]]
    np.testing.assert_array_equal(out, expected, err_msg="a[k], b[k, -1 - k], c[-1, k, k - 1] with k from index")
    for k in index.tolist():
        expected_a[k] += 1000
    np.testing.assert_array_equal(a, expected_a, err_msg="a[k] += 1000 with negative k")


def layouts_2d():
    base = np.arange(9 * 14, dtype=np.float32).reshape(9, 14) * 0.5
    return {
        "C": base.copy(),
        "F": np.asfortranarray(base),
        "A (strided)": np.arange(20 * 45, dtype=np.float32).reshape(20, 45)[1::2, 2::3],
        "A (reversed)": base[::-1, ::-2],
    }


@pytest.mark.parametrize("layout", list(layouts_2d()))
def test_2d_layouts_and_attributes(kernels, layout):
    a = layouts_2d()[layout]
    out = np.zeros(a.shape, dtype=np.float32)
    info = np.zeros(11, dtype=np.int64)
    kernels.copy_2d[(2, 4), (8, 4)](a, out, info)
    expected = a * 2 + a.T.T
    np.testing.assert_array_equal(out, expected, err_msg=f"out[i, j] = a[i, j] * 2 + a.T[j, i] for a {layout} array")
    attributes = [a.shape[0], a.shape[1], a.strides[0], a.strides[1], a.size, a.ndim, len(a), a.T.shape[0],
                  a.T.strides[0], a.itemsize, a.nbytes]
    assert info.tolist() == attributes, (
        f"shape, strides, size, ndim, len, T.shape[0], T.strides[0], itemsize, nbytes of a {layout} array")


def layouts_3d():
    base = np.arange(5 * 6 * 7, dtype=np.float64).reshape(5, 6, 7)
    return {
        "C": base.copy(),
        "F": np.asfortranarray(base),
        "A": np.arange(10 * 6 * 21, dtype=np.float64).reshape(10, 6, 21)[::2, :, ::-3],
    }


@pytest.mark.parametrize("layout", list(layouts_3d()))
def test_3d_layouts(kernels, layout):
    a = layouts_3d()[layout]
    out = np.zeros(a.shape)
    kernels.copy_3d[(2, 2, 2), (4, 4, 4)](a, out)
    np.testing.assert_array_equal(out, a * 3, err_msg=f"3-D indexing, .T and negative indices on a {layout} array")


SLICES = [(0, 10, 1), (2, 8, 3), (8, 2, -1), (9, -11, -2), (-3, 100, 1), (-100, 5, 2), (5, 5, 1), (7, 3, 1),
          (0, 10, -1), (-1, -11, -3), (3, 9, 0x7FFFFFFF), (0, 10, -7)]


@pytest.mark.parametrize("start,stop,step", SLICES)
def test_1d_views(kernels, start, stop, step):
    a = np.arange(10, dtype=np.float32)
    out = np.full(10, -1, dtype=np.float32)
    info = np.zeros(12, dtype=np.int64)
    kernels.slice_1d[1, 1](a, start, stop, step, out, info)
    view = a[start:stop:step]
    assert info[0] == view.size, f"a[{start}:{stop}:{step}].shape[0]"
    if view.size:  # NumPy normalizes the strides of empty views, Numba does not
        assert info[1] == view.strides[0], f"a[{start}:{stop}:{step}].strides[0]"
    np.testing.assert_array_equal(out[: view.size], view, err_msg=f"elements of a[{start}:{stop}:{step}]")
    fixed = [8, 1 * 10 + 8, 9 * 10 + 0, -4, 5, 8, 10, 0, 2, 7]
    assert info[2:].tolist() == fixed, (
        "len(a[1:-1]), a[1:-1] ends, a[::-1] ends and stride, a[::2], a[-100:100], a[5:2], a[:3], a[-3:]")


@pytest.mark.parametrize("i,j", [(0, 0), (2, 5), (-1, -1), (-4, 3)])
def test_2d_views(kernels, i, j):
    a = np.arange(5 * 7, dtype=np.float32).reshape(5, 7)
    row = np.zeros(7, dtype=np.float32)
    column = np.zeros(5, dtype=np.float32)
    b = a[1:3, ::-2]
    block = np.zeros(b.shape, dtype=np.float32)
    info = np.zeros(11, dtype=np.int64)
    kernels.slice_2d[1, 1](a, i, j, row, column, block, info)
    np.testing.assert_array_equal(row, a[i, :], err_msg=f"a[{i}, :]")
    np.testing.assert_array_equal(column, a[:, j], err_msg=f"a[:, {j}]")
    np.testing.assert_array_equal(block, b, err_msg="a[1:3, ::-2]")
    tt = a.T[::2, 1:]
    expected = [7, 5, a[:, j].strides[0], b.shape[0], b.shape[1], b.strides[0], b.strides[1], 1, 1,
                tt.shape[0] * 100 + tt.shape[1], 1]
    assert info.tolist() == expected, "shapes and strides of a[i, :], a[:, j], a[1:3, ::-2], a.T[::2, 1:]"


def test_local_arrays(kernels):
    x = np.array([0.5, -1.0, 3.0, 7.25])
    out = np.zeros((x.size, 5))
    kernels.local_arrays[1, 8](x, out)
    for i, v in enumerate(x.tolist()):
        line = [v * k for k in range(8)]
        grid = [[p * 10 + q + i for q in range(4)] for p in range(3)]
        expected = [
            sum(line[-1 - k] * (k + 1) for k in range(8)),
            grid[-1][-1] + grid[1][2],
            34,
            12 + 8,
            sum(r[0] for r in grid),
        ]
        np.testing.assert_array_equal(out[i], expected, err_msg=f"local arrays in thread {i}")


def test_tuples(kernels):
    t = (1.5, -2.0, 4.25)
    mixed = (np.int32(7), 0.125)
    index = np.array([0, 1, 2], dtype=np.int64)
    out = np.zeros(16 * index.size)
    kernels.tuples[1, 4](t, mixed, index, out)
    for i, k in enumerate(index.tolist()):
        lo, hi = sorted((t[k], t[-1 - k]))
        u = (1, 2, 3, k)
        expected = [t[k], t[-1], 7 + 0.125, 1.5 * 100 - 20 + 4.25, lo, hi, t[k] + t[k] * 2 + t[k] + 0.5,
                    u[-1] + u[k] + 4, sum(t), 1, (t[0], t[1]) < (t[1], t[0]), k * 10 + k + 1, max(t), t[k - 3],
                    0.125 * 7, 5]
        np.testing.assert_array_equal(out[16 * i: 16 * i + 16], expected, err_msg=f"tuple operations with k={k}")


def test_records(kernels):
    from_numba = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
    states = np.zeros(5, dtype=from_numba)
    states["s0"] = [10, 20, 30, 40, 2**64 - 1]
    states["s1"] = [1, 2, 3, 4, 5]
    s0 = [int(v) for v in states["s0"]]
    s1 = [int(v) for v in states["s1"]]
    incremented = [(v + 1) % 2**64 for v in s0]
    out = np.zeros(4 * states.size, dtype=np.uint64)
    kernels.records[1, 8](states, out)
    for i in range(states.size):
        got = [int(v) for v in out[4 * i: 4 * i + 4]]
        assert got[:2] == [s0[i], s1[i]], f"r.s0 and r['s1'] of r = states[{i}]"
        # r is a reference into the array: r.s0 = ... changes states[i].
        assert got[3] == incremented[i], f"states[{i}].s0 after r.s0 = r.s0 + 1"
        # Another thread may or may not have updated states[-1 - i] yet.
        assert got[2] in (s0[-1 - i], incremented[-1 - i]), f"states[{-1 - i}].s0 read by thread {i}"
    assert [int(v) for v in states["s0"]] == incremented, "the stores through r"
    assert [int(v) for v in states["s1"]] == [v ^ 0xFF for v in s1], "states[i]['s1'] = ..."
    kernels.copy_record[1, 1](states)
    assert states[0] == states[1], "states[0] = states[1] copies the record"


def range_cases(dtype):
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    signed = info.min < 0
    cases = [(0, 10, 1), (0, 10, 3), (10, 0, 1), (3, 3, 1), (0, 100, 7), (hi - 10, hi, 3), (0, hi, hi // 3 + 1),
             (lo, lo + 5, 1), (lo, hi, hi // 2 + 1)]
    if signed:
        cases += [(10, 0, -1), (10, -10, -3), (-5, 5, 2), (hi, lo, -(hi // 2) - 1), (hi, hi - 10, -4), (0, 10, -1),
                  (-3, -20, -5), (lo + 5, lo, -1)]
    return [c for c in cases if all(lo <= v <= hi for v in c)]


def range_length(start, stop, step):
    # len() of a Python range fails beyond 2**63 - 1 items.
    return max(0, (stop - start + step - (1 if step > 0 else -1)) // step)


def as_int64(value, dtype):
    """`value` wrapped into `dtype`, then converted to int64 as a store does."""
    bits = np.dtype(dtype).itemsize * 8
    value %= 1 << bits
    if np.dtype(dtype).kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value - (1 << 64) if value >= 1 << 63 else value


# The integer type a range of each argument type counts in (Numba's
# range_state32, range_state64 and range_state_unsigned64).
RANGE_ELEMENT = {"int8": "int32", "int16": "int32", "uint8": "int32", "uint16": "int32", "int32": "int32",
                 "uint32": "int64", "int64": "int64", "uint64": "uint64"}


@pytest.mark.parametrize("dtype", RANGE_TYPES)
def test_ranges(kernels, dtype):
    cases = range_cases(dtype)
    bounds = np.array(list(itertools.chain(*cases)), dtype=dtype)
    out = np.zeros((len(cases), 5), dtype=np.int64)
    getattr(kernels, f"ranges_{dtype}")[1, 32](bounds, out)
    element = RANGE_ELEMENT[dtype]
    for (start, stop, step), got in zip(cases, out.tolist()):
        count = range_length(start, stop, step)
        last = start + (count - 1) * step
        expected = [count, as_int64(start, element) if count else 0, as_int64(last, element) if count else 0,
                    as_int64(count, element), as_int64(range_length(start, stop, 1), element)]
        assert got == expected, (
            f"range({start}, {stop}, {step}) of {dtype}: (count, first, last, len, len(range(start, stop)))")


def test_3d_grid(kernels):
    out = np.zeros((5, 6, 7), dtype=np.int64)
    sizes = np.zeros(5, dtype=np.int64)
    kernels.grid_3d[(2, 3, 2), (4, 2, 3)](out, sizes)
    z, y, x = np.meshgrid(np.arange(5), np.arange(6), np.arange(7), indexing="ij")
    expected = ((z // 3) * 100 + z % 3) * 1000000 + ((y // 2) * 100 + y % 2) * 1000 + (x // 4) * 100 + x % 4
    np.testing.assert_array_equal(out, expected, err_msg="cuda.grid(3) and blockIdx/threadIdx .x .y .z")
    assert sizes.tolist() == [8, 6, 6, 423, 232], "cuda.gridsize(3), blockDim, gridDim"


def test_2d_grid(kernels):
    out = np.full((13, 21), -1, dtype=np.int64)
    sizes = np.zeros(2, dtype=np.int64)
    kernels.grid_2d[(3, 2), (8, 8)](out, sizes)
    np.testing.assert_array_equal(out, np.arange(13 * 21).reshape(13, 21), err_msg="cuda.grid(2)")
    assert sizes.tolist() == [24, 16], "cuda.gridsize(2)"
