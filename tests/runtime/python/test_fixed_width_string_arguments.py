"""Kernels specialized on demand for NumPy fixed-width string arrays (`U<n>`,
`S<n>`) and records with string fields: each width is a type of its own, as
Numba's typeof makes it (UnicodeCharSeq(n), CharSeq(n)), and dispatch tells
them apart by the array's buffer format."""

import numpy as np
import pytest
from kiln import _compiler

KERNELS = '''
from kiln import cuda


@cuda.jit
def fill(a):
    i = cuda.grid(1)
    if i < len(a):
        a[i] = "Q"


@cuda.jit
def fill_bytes(a):
    i = cuda.grid(1)
    if i < len(a):
        a[i] = b"Q"


@cuda.jit
def copy_field(a):
    a[1]["y"] = a[0]["y"]
'''


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("fixed_width_string_kernels", KERNELS)


def test_each_width_and_kind_is_a_specialization_of_its_own(kernels):
    for dtype in ("<U1", "<U7", "S1", "S9"):
        a = np.zeros(5, dtype)
        (kernels.fill if dtype[0] == "<" else kernels.fill_bytes)[1, 5](a[::2])
        expected = np.zeros(5, dtype)
        expected[::2] = "Q" if dtype[0] == "<" else b"Q"
        np.testing.assert_array_equal(a, expected, err_msg=dtype)
    assert sorted(kernels.fill.signatures) == ["(array([unichr x 1], 1d, A))",
                                               "(array([unichr x 7], 1d, A))"]


def test_a_str_never_fills_a_byte_string(kernels):
    with pytest.raises(_compiler.CompileError, match=r"cannot store Literal\[str\]\(Q\) into array\(\[char x 2\], 1d, C\)"):
        kernels.fill[1, 1](np.zeros(1, "S2"))


def test_records_with_string_fields_dispatch_by_their_layout(kernels):
    for dt in (np.dtype([("x", np.int32), ("y", "<U12")]), np.dtype([("x", np.int8), ("y", "S3")])):
        a = np.zeros(2, dt)
        a[0] = (1, "abc")
        kernels.copy_field[1, 1](a)
        assert a[1]["y"] == a[0]["y"] and a[1]["x"] == 0, dt
