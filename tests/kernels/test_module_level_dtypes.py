"""NumPy dtypes a Numba-style module defines at module level (`np.dtype`,
with `numba.from_dtype` for signatures) are the types its kernels see,
laid out as NumPy lays them out: an array made with the same dtype by
NumPy dispatches to the kernel and its fields land where NumPy put them,
checked on the CPU engine."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
import numpy as np
import numba
from numba import cuda, from_dtype, vectorize
from numba.np.numpy_support import from_dtype as numpy_support_from_dtype

ALIGNED = np.dtype([("flag", np.bool_), ("pos", np.float32, 3), ("mass", "f8"),
                    ("grid", "<i2", (2, 2)), ("id", np.int32), ("z", np.complex64)], align=True)
PACKED = np.dtype([("a", np.int8), ("b", "<f8"), ("tag", "S3"), ("c", "u2")])
aligned_t = from_dtype(ALIGNED)
packed_t = numpy_support_from_dtype(PACKED)
day_t = numba.from_dtype(np.dtype("datetime64[D]"))
SCRATCH = np.dtype([("x", float), ("n", "i4")], align=True)


@cuda.jit(numba.void(aligned_t[::1], numba.float32))
def move(items, dt):
    i = cuda.grid(1)
    if i < items.size:
        item = items[i]
        for k in range(3):
            item.pos[k] += dt * item.mass
        item.grid[1, 0] = item.id
        item.z = item.z * 2
        item.flag = not item.flag


@cuda.jit(numba.void(packed_t[:], numba.int64[:]))
def sum_packed(items, out):
    i = cuda.grid(1)
    if i < items.size:
        out[i] = items[i].a + np.int64(items[i].b) + items[i].c


@cuda.jit("void(float64[:])")
def scratch(out):
    s = cuda.local.array(2, dtype=SCRATCH)
    s[1].x = 2.5
    s[1].n = 3
    out[0] = s[1].x * s[1].n


@vectorize([(day_t, day_t)], target="cuda")
def days_between(start, end):
    return end - start
'''

ALIGNED = np.dtype([("flag", np.bool_), ("pos", np.float32, 3), ("mass", "f8"),
                    ("grid", "<i2", (2, 2)), ("id", np.int32), ("z", np.complex64)], align=True)
PACKED = np.dtype([("a", np.int8), ("b", "<f8"), ("tag", "S3"), ("c", "u2")])


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("module_level_dtypes"))


def test_an_aligned_dtype_is_laid_out_as_numpy_lays_it_out(module):
    items = np.zeros(3, ALIGNED)
    items["mass"] = [1.0, 2.0, 3.0]
    items["id"] = [4, 5, 6]
    items["z"] = [1 + 1j, 2, 3j]
    items["flag"] = [True, False, True]
    module.move[1, 3](items, np.float32(0.5))
    np.testing.assert_array_equal(items["pos"], np.repeat([[0.5], [1.0], [1.5]], 3, 1))
    np.testing.assert_array_equal(items["grid"][:, 1, 0], [4, 5, 6])
    np.testing.assert_array_equal(items["z"], [2 + 2j, 4, 6j])
    np.testing.assert_array_equal(items["flag"], [False, True, False])


def test_a_packed_dtype_is_laid_out_as_numpy_lays_it_out(module):
    assert PACKED.itemsize == 14  # no padding: b at offset 1, c at 12
    items = np.zeros(2, PACKED)
    items["a"], items["b"], items["c"], items["tag"] = [1, -2], [10.0, 20.0], [300, 400], [b"ab", b"c"]
    out = np.zeros(2, np.int64)
    module.sum_packed[1, 2](items, out)
    np.testing.assert_array_equal(out, [311, 418])


def test_a_dtype_from_python_types_makes_local_records(module):
    out = np.zeros(1)
    module.scratch[1, 1](out)
    assert out[0] == 7.5


def test_a_datetime_dtype_types_a_ufunc(module):
    start = np.array(["2024-02-27", "NaT"], "datetime64[D]")
    between = module.days_between(start, start + np.timedelta64(3, "D"))
    assert between.dtype == np.dtype("timedelta64[D]")
    np.testing.assert_array_equal(between, np.array([3, "NaT"], "timedelta64[D]"))
