"""Assignment to a slice of an array in kernels, as NumPy's and Numba's:
a scalar fills the view (`a[i, :] = 0`), an array is broadcast onto it
(`a[:, :] = column`, `r[()] = x[()]`), converting to the view's dtype; an
array of another shape raises ValueError. Checked on the CPU engine against
NumPy, and through ptxas for every default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda, float32, float64, int32, void


@cuda.jit(void(float64[:, ::1], float64))
def fill_row_and_column(a, v):
    a[1, :] = v
    a[:, 0] = -v


@cuda.jit(void(float64[:, ::1]))
def fill_strided(a):
    a[::2, 1::2] = 9


@cuda.jit(void(float32[:, :], int32[:, :]))
def copy_converting(a, b):
    a[:, :] = b


@cuda.jit(void(float64[:, ::1], float64[:, :]))
def broadcast(a, b):
    a[:, :] = b


@cuda.jit(void(float64[::1], float64[::1]))
def whole(r, x):
    r[()] = x[()]


@cuda.jit(void(float64[:, ::1], float64[:]), debug=True, opt=False)
def checked_copy(a, row):
    a[0, :] = row
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("slice_assignment"))


def test_a_scalar_fills_the_view(module):
    a = np.zeros((3, 4))
    module.fill_row_and_column[1, 1](a, 2.5)
    expected = np.zeros((3, 4))
    expected[1, :] = 2.5
    expected[:, 0] = -2.5
    np.testing.assert_array_equal(a, expected)

    a = np.zeros((5, 6))
    module.fill_strided[1, 1](a)
    expected = np.zeros((5, 6))
    expected[::2, 1::2] = 9
    np.testing.assert_array_equal(a, expected)


def test_an_array_is_copied_converting_its_elements(module):
    a = np.zeros((2, 3), np.float32)
    b = np.arange(6, dtype=np.int32).reshape(2, 3)
    module.copy_converting[1, 1](a, b)
    np.testing.assert_array_equal(a, b)
    r = np.zeros(4)
    module.whole[1, 1](r, np.arange(4.0))
    np.testing.assert_array_equal(r, np.arange(4.0))


@pytest.mark.parametrize("shape", [(3, 1), (1, 4), (1, 1), (3, 4)])
def test_an_array_is_broadcast_onto_the_view(module, shape):
    a = np.zeros((3, 4))
    b = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1
    module.broadcast[1, 1](a, b)
    expected = np.zeros((3, 4))
    expected[:, :] = b
    np.testing.assert_array_equal(a, expected)


def test_an_array_of_another_shape_raises_value_error(module):
    a = np.zeros((2, 3))
    with pytest.raises(ValueError, match="cannot assign slice from input of different size"):
        module.checked_copy[1, 1](a, np.ones(4))
    np.testing.assert_array_equal(a, 0)
    module.checked_copy[1, 1](a, np.ones(3))
    np.testing.assert_array_equal(a[0], 1)


def test_slice_assignments_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 6
