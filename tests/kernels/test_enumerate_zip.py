"""`for` loops over enumerate() and zip(), of arrays, ranges, tuples of one
type and of each other, as Numba compiles them: enumerate counts from
`start` (0 unless given), zip stops with the shortest. Checked on the CPU
engine against Python, and through ptxas for every default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda, float64, int64, void

WEIGHTS = (0.5, 1.5, 2.5)


@cuda.jit(void(float64[::1], float64[::1]))
def enumerate_array(out, x):
    for i, v in enumerate(x):
        out[i] = i * v


@cuda.jit(void(int64[::1]))
def enumerate_from(out):
    for i, v in enumerate(range(3, 6), start=10):
        out[i - 10] = i * 100 + v


@cuda.jit(void(float64[::1], float64[::1], float64[::1], int64[::1]))
def zip_shortest(out, x, y, count):
    n = 0
    for a, b in zip(x, y):
        out[n] = a - b
        n += 1
    count[0] = n


@cuda.jit(void(float64[::1], float64[::1], float64[::1]))
def enumerate_zip_with_a_tuple(out, x, y):
    for i, (a, (w, b)) in enumerate(zip(x, zip(WEIGHTS, y))):
        out[i] = a * w + b


@cuda.jit(void(float64[::1], float64[::1]))
def zip_enumerate(out, x):
    for (i, a), j in zip(enumerate(x), range(1, 100)):
        out[i] = a * j
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("enumerate_zip"))


def test_enumerate_counts_from_zero(module):
    x = np.array([3.0, 4.0, 5.0, 6.0])
    out = np.zeros_like(x)
    module.enumerate_array[1, 1](out, x)
    np.testing.assert_array_equal(out, np.arange(4) * x)


def test_enumerate_counts_from_start(module):
    out = np.zeros(3, dtype=np.int64)
    module.enumerate_from[1, 1](out)
    assert out.tolist() == [1003, 1104, 1205]


def test_zip_stops_with_the_shortest(module):
    x = np.arange(5.0)
    y = np.arange(3.0) * 10
    out = np.zeros(5)
    count = np.zeros(1, dtype=np.int64)
    module.zip_shortest[1, 1](out, x, y, count)
    assert count[0] == 3
    np.testing.assert_array_equal(out, [0.0, -9.0, -18.0, 0.0, 0.0])


def test_enumerate_of_zip_of_a_tuple_and_nested_zip(module):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([10.0, 20.0, 30.0, 40.0])
    out = np.zeros(4)
    module.enumerate_zip_with_a_tuple[1, 1](out, x, y)
    np.testing.assert_array_equal(out, [1.0 * 0.5 + 10, 2.0 * 1.5 + 20, 3.0 * 2.5 + 30, 0.0])


def test_zip_of_enumerate(module):
    x = np.array([2.0, 3.0, 4.0])
    out = np.zeros(3)
    module.zip_enumerate[1, 1](out, x)
    np.testing.assert_array_equal(out, x * np.arange(1, 4))


def test_enumerate_and_zip_assemble_for_every_default_architecture(tmp_path, kiln):
    fatbins = kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)
    assert len(fatbins) == 5, fatbins
