"""Fixed-width strings: the elements of NumPy `U<n>` and `S<n>` arrays and
record fields, which Numba types as UnicodeCharSeq(n) ("[unichr x n]") and
CharSeq(n) ("[char x n]"). Kernels store str constants into unicode strings
and bytes constants into byte strings, cut to the width or padded with
zeros, and copy strings of one width; Numba refuses every other mix, and so
does Kiln."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda


@cuda.jit("void(UnicodeCharSeq(5)[::1])")
def store_str(a):
    i = cuda.grid(1)
    if 3 <= i < len(a):
        a[i] = "XYZ"
    if i == 0:
        a[0] = "longer than five"
        a[1] = ""
        a[2] = "h\\u00e9\\u4e16\\U0001f600"


@cuda.jit("void(CharSeq(4)[::1])")
def store_bytes(a):
    i = cuda.grid(1)
    if 2 <= i < len(a):
        a[i] = b"ab"
    if i == 0:
        a[0] = b"abcdefg"
        a[1] = b"\\xff\\x00z"


@cuda.jit("void(UnicodeCharSeq(3)[:, :], UnicodeCharSeq(3)[:, :])")
def copy_2d(out, source):
    for i in range(source.shape[0]):
        for j in range(source.shape[1]):
            item = source[i, j]
            out[i, j] = item


RECORD = ("Record([('x', {'type': int32, 'offset': 0}), "
          "('y', {'type': UnicodeCharSeq(12), 'offset': 4})], 52, False)")
BYTES_RECORD = ("Record([('x', {'type': float32, 'offset': 0}), "
                "('y', {'type': CharSeq(3), 'offset': 4})], 7, False)")


@cuda.jit("void(" + RECORD + "[::1])")
def store_fields(a):
    a[0]["x"] = 1
    a[0]["y"] = "ABC"
    a[1]["x"] = 2
    a[1]["y"] = a[0]["y"]
    a[2].y = "ninety-nine chars"


@cuda.jit("void(" + BYTES_RECORD + "[::1])")
def store_byte_fields(a):
    a[0]["y"] = b"AB"
    a[1]["y"] = a[0]["y"]

'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("strings"), name="strings")


def test_str_constants_fill_unicode_strings_cut_or_padded(built):
    a = np.array(["?????"] * 6, dtype="<U5")
    built.store_str[1, 5](a)
    expected = np.array(["longe", "", "hé世😀", "XYZ", "XYZ", "?????"], dtype="<U5")
    np.testing.assert_array_equal(a, expected)
    # padding is zeros, not what the element held before
    assert a.view(np.uint32).reshape(6, 5)[1].tolist() == [0, 0, 0, 0, 0]
    assert a.view(np.uint32).reshape(6, 5)[3].tolist() == [ord("X"), ord("Y"), ord("Z"), 0, 0]


def test_bytes_constants_fill_byte_strings_cut_or_padded(built):
    a = np.array([b"????"] * 4, dtype="S4")
    built.store_bytes[1, 3](a)
    assert a.view(np.uint8).reshape(4, 4).tolist() == [
        list(b"abcd"), [0xFF, 0x00, ord("z"), 0], list(b"ab\0\0"), list(b"????")]


def test_strings_copy_between_elements_of_any_layout(built):
    source = np.array([["a", "bc", "def"], ["gh", "", "xyz"]], dtype="<U3")
    out = np.zeros((3, 6), dtype="<U3")
    built.copy_2d[1, 1](out[::-2, ::2], source)
    np.testing.assert_array_equal(out[::-2, ::2], source)
    assert (out[1] == "").all() and (out[:, 1::2] == "").all()


def test_record_fields_take_strings_by_name_and_attribute(built):
    dt = np.dtype([("x", np.int32), ("y", "<U12")])
    a = np.zeros(3, dt)
    built.store_fields[1, 1](a)
    np.testing.assert_array_equal(
        a, np.array([(1, "ABC"), (2, "ABC"), (0, "ninety-nine ")], dtype=dt))
    packed = np.dtype([("x", np.float32), ("y", "S3")])  # 7 bytes, unaligned
    b = np.zeros(2, packed)
    built.store_byte_fields[1, 1](b)
    assert b["y"].tolist() == [b"AB", b"AB"]


@pytest.mark.parametrize("body, signature, message", [
    ('a[0] = "text"', "CharSeq(4)[::1]", r"cannot store Literal\[str\]\(text\) into array\(\[char x 4\]"),
    ('a[0] = b"text"', "UnicodeCharSeq(4)[::1]",
     r"cannot store Literal\[bytes\]\(text\) into array\(\[unichr x 4\]"),
    ("a[0] = 7", "UnicodeCharSeq(4)[::1]", r"cannot store Literal\[int\]\(7\) into array\(\[unichr x 4\]"),
    ('a[0] = b"x"', "int32[::1]", r"cannot store Literal\[bytes\]\(x\) into array\(int32"),
    ("a[0] = a[1] == a[2]", "UnicodeCharSeq(4)[::1]",
     r"operator '==' is not supported between \[unichr x 4\] and \[unichr x 4\]"),
    ('print(b"x")', "int32[::1]", r"Literal\[bytes\]\(x\) cannot be printed"),
])
def test_what_numba_refuses_is_refused_with_the_types(tmp_path, body, signature, message):
    source = f'from numba import cuda\n\n@cuda.jit("void({signature})")\ndef k(a):\n    {body}\n'
    with pytest.raises(kiln_cpu.CompileError, match=message):
        kiln_cpu.compile_source(source, tmp_path, name="refused")


def test_copies_between_widths_are_refused(tmp_path):
    source = ('from numba import cuda\n\n@cuda.jit("void(UnicodeCharSeq(8)[::1], UnicodeCharSeq(4)[::1])")\n'
              "def widen(a, b):\n    a[0] = b[0]\n")
    with pytest.raises(kiln_cpu.CompileError,
                       match=r"cannot store \[unichr x 4\] into array\(\[unichr x 8\], 1d, C\)"):
        kiln_cpu.compile_source(source, tmp_path, name="widen")


def test_every_architecture_assembles_string_stores(tmp_path, kiln):
    fatbins = kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)
    assert len(fatbins) == 5
