"""`a.real` and `a.imag` of complex arrays in kernels, as Numba's: views of
the elements' parts (floats with the complex array's strides), which can be
read, written and updated atomically; `.real` of a real array is the array.
Checked on the CPU engine against NumPy, and through ptxas for every
default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import complex64, complex128, cuda, float64, void


@cuda.jit(void(complex128[::1]))
def atomic_on_parts(values):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(values.real, i, 1)
        cuda.atomic.add(values.imag, i, 2)


@cuda.jit(void(complex64[:, ::1], float64[:, ::1]))
def split_2d(z, out):
    re = z.real
    im = z.imag
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            out[i, j] = re[i, j] - im[i, j]
    re[0, 0] = 100.0


@cuda.jit(void(float64[::1]))
def real_of_real(x):
    r = x.real
    r[0] = 5.0
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("complex_parts"))


def test_atomics_on_the_parts_of_a_complex_array(module):
    values = np.arange(32) + np.arange(32) * 1j
    expected = values + 1 + 2j
    module.atomic_on_parts[1, 32](values)
    np.testing.assert_array_equal(values, expected)


def test_the_parts_are_views_with_the_arrays_strides(module):
    z = (np.arange(6) + 1j * np.arange(6)[::-1]).reshape(2, 3).astype(np.complex64)
    out = np.zeros((2, 3))
    expected = z.real - z.imag
    module.split_2d[1, 1](z, out)
    np.testing.assert_array_equal(out, expected)
    assert z[0, 0] == 100 + 5j


def test_the_real_part_of_a_real_array_is_the_array(module):
    x = np.zeros(2)
    module.real_of_real[1, 1](x)
    assert x[0] == 5.0


def test_part_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 3
