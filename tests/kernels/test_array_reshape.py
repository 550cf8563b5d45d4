"""arr.reshape() in kernels, as Numba's: the elements of a contiguous array
in a new shape (extents as arguments or one tuple, one of them -1 to be
inferred), a view in the array's own layout; a shape of another size raises
ValueError. Checked on the CPU engine against NumPy, and through ptxas for
every default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda, float64, int64, void
from numba.types import UniTuple


@cuda.jit(void(int64[::1], UniTuple(int64, 2), int64[:, ::1]))
def to_2d(a, shape, out):
    y = a.reshape(shape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            out[i, j] = y[i, j]


@cuda.jit(void(int64[:, ::1], int64[::1]))
def flatten_with_unknown(a, out):
    y = a.reshape(-1)
    for i in range(y.shape[0]):
        out[i] = y[i]


@cuda.jit(void(int64[:, ::1], int64[:, :, ::1]))
def to_3d_inferring_middle(a, out):
    y = a.reshape(2, -1, 3)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            for k in range(y.shape[2]):
                out[i, j, k] = y[i, j, k]


@cuda.jit(void(float64[::1, :], float64[::1, :]))
def fortran_keeps_its_order(a, out):
    y = a.reshape((a.shape[1], a.shape[0]))
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            out[i, j] = y[i, j]


@cuda.jit(void(int64[::1], int64[::1]))
def writes_through(a, out):
    y = a.reshape(2, 3)
    y[1, 2] = 99
    out[0] = y.size


@cuda.jit(void(int64[::1], int64), debug=True, opt=False)
def wrong_size(a, n):
    y = a.reshape(n, 5)
    y[0, 0] = 1
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("reshape"))


def test_reshape_to_a_shape_tuple(module):
    a = np.arange(24)
    for shape in ((4, 6), (8, 3), (24, 1), (-1, 4), (3, -1)):
        expected = a.reshape(shape)
        out = np.zeros(expected.shape, np.int64)
        module.to_2d[1, 1](a, shape, out)
        np.testing.assert_array_equal(out, expected, err_msg=f"shape {shape}")


def test_an_unknown_extent_is_inferred(module):
    a = np.arange(30).reshape(5, 6)
    out = np.zeros(30, np.int64)
    module.flatten_with_unknown[1, 1](a, out)
    np.testing.assert_array_equal(out, a.reshape(-1))
    out = np.zeros((2, 5, 3), np.int64)
    module.to_3d_inferring_middle[1, 1](a, out)
    np.testing.assert_array_equal(out, a.reshape(2, -1, 3))


def test_empty_arrays_reshape(module):
    a = np.arange(0)
    out = np.zeros((0, 4), np.int64)
    module.to_2d[1, 1](a, (0, 4), out)
    assert out.shape == (0, 4)


def test_a_fortran_array_reshapes_in_fortran_order(module):
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    out = np.zeros((4, 3), order="F")
    module.fortran_keeps_its_order[1, 1](a, out)
    np.testing.assert_array_equal(out, a.reshape((4, 3), order="F"))


def test_the_reshaped_array_is_a_view(module):
    a = np.arange(6)
    out = np.zeros(1, np.int64)
    module.writes_through[1, 1](a, out)
    assert a[5] == 99 and out[0] == 6


def test_a_shape_of_another_size_raises_value_error(module):
    with pytest.raises(ValueError, match="total size of new array must be unchanged"):
        module.wrong_size[1, 1](np.arange(12), 3)
    with pytest.raises(ValueError, match="total size of new array must be unchanged"):
        module.wrong_size[1, 1](np.arange(12), -2)
    a = np.arange(10)
    module.wrong_size[1, 1](a, 2)
    assert a[0] == 1


def test_reshape_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 6
