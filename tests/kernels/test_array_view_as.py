"""arr.view(dtype) in kernels, as NumPy's and Numba's: the array's bytes as
elements of another dtype. Items of the same size keep the shape (any
strides); items of another size change the extent of the contiguous
dimension (C's last, F's first, checked at run time for A arrays), and an
array they do not fit raises ValueError. Checked on the CPU engine against
NumPy, and through ptxas for every default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
import numpy as np
from numba import cuda, float32, int64, uint8, uint32, void


@cuda.jit(void(uint8[::1], int64, int64, int64[::1]))
def words_of_bytes(b, start, stop, out):
    v = b[start:stop].view(np.int32)
    for i in range(v.shape[0]):
        out[i] = v[i]
    out[7] = v.shape[0]


@cuda.jit(void(float32[:, ::1], uint8[:, ::1]))
def bytes_of_floats(f, out):
    v = f.view(np.uint8)
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            out[i, j] = v[i, j]


@cuda.jit(void(float32[::1, :], uint32[::1, :]))
def same_size_fortran(f, out):
    v = f.view(np.uint32)
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            out[i, j] = v[i, j]


@cuda.jit(void(uint8[::1], int64), debug=True, opt=False)
def misfit(b, stop):
    v = b[:stop].view(np.int32)
    v[0] = 1
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("view_as"))


def test_larger_items_take_fewer_elements(module):
    b = np.arange(64, dtype=np.uint8)
    out = np.zeros(8, np.int64)
    module.words_of_bytes[1, 1](b, 4, 20, out)
    expected = b[4:20].view(np.int32)
    np.testing.assert_array_equal(out[: expected.size], expected)
    assert out[7] == expected.size


def test_smaller_items_widen_the_last_dimension(module):
    f = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    out = np.zeros((2, 12), np.uint8)
    module.bytes_of_floats[1, 1](f, out)
    np.testing.assert_array_equal(out, f.view(np.uint8))


def test_items_of_the_same_size_keep_the_shape(module):
    f = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = np.zeros((2, 3), np.uint32, order="F")
    module.same_size_fortran[1, 1](f, out)
    np.testing.assert_array_equal(out, f.view(np.uint32))


def test_an_array_the_dtype_does_not_fit_raises_value_error(module):
    with pytest.raises(ValueError, match="new type not compatible with array"):
        module.misfit[1, 1](np.zeros(16, np.uint8), 6)
    b = np.zeros(16, np.uint8)
    module.misfit[1, 1](b, 8)
    assert b[:4].view(np.int32)[0] == 1


def test_view_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 4
