"""arr.copy() in kernels, as NumPy's: a new C-contiguous, writable array of
the same elements, whatever the receiver's strides, that later writes to
either side leave apart. Kernels allocate no memory at run time, so the copy
lives in the thread's local memory and its receiver's shape must be known
when the kernel compiles: an array of the module (frozen in, as Numba freezes
globals), or a cuda.local.array or cuda.shared.array of constant shape.
Checked on the CPU engine against NumPy, and through ptxas for every default
architecture."""

import json
import os
import sys

import numpy as np
import pytest

from kiln._compiler import CompileError

SOURCE = """\
import numpy as np
from kiln import cuda
from numba import float64, int64, void

REVERSED = np.array([1, 2, 3])[::-1]
FORTRAN = np.asfortranarray(np.arange(6.0).reshape(2, 3))


@cuda.jit(void(int64[::1]))
def copy_of_a_strided_constant(out):
    q = REVERSED.copy()
    q[0] = 7
    for i in range(q.shape[0]):
        out[i] = q[i]
    out[3] = REVERSED[0]


@cuda.jit(void(float64[:, ::1]))
def copy_of_a_fortran_constant(out):
    q = FORTRAN.copy()
    for i in range(q.shape[0]):
        for j in range(q.shape[1]):
            out[i, j] = q[i, j]


@cuda.jit(void(float64[:, ::1]))
def copies_of_working_arrays(out):
    a = cuda.local.array((2, 3), np.float64)
    s = cuda.shared.array(3, np.float64)
    for j in range(3):
        s[j] = 10.0 * j
        for i in range(2):
            a[i, j] = i * 3 + j
    b = a.copy()
    t = s.copy()
    a[0, 0] = 100.0
    s[0] = 100.0
    for i in range(2):
        for j in range(3):
            out[i, j] = b[i, j] + t[j]
"""


@pytest.fixture(scope="module")
def module(file_source_module):
    return file_source_module("array_copies", SOURCE)


def test_a_copy_is_writable_and_leaves_the_constant_alone(module):
    out = np.zeros(4, np.int64)
    module.copy_of_a_strided_constant[1, 1](out)
    np.testing.assert_array_equal(out, [7, 2, 1, 3])


def test_a_copy_of_a_fortran_array_keeps_its_elements(module):
    out = np.zeros((2, 3))
    module.copy_of_a_fortran_constant[1, 1](out)
    np.testing.assert_array_equal(out, np.arange(6.0).reshape(2, 3))


def test_copies_of_local_and_shared_arrays_do_not_see_later_writes(module):
    out = np.zeros((2, 3))
    module.copies_of_working_arrays[1, 1](out)
    np.testing.assert_array_equal(out, np.arange(6.0).reshape(2, 3) + [0.0, 10.0, 20.0])


@pytest.mark.parametrize("receiver, signature", [
    ("x", "float64[::1]"),
    ("x[1:]", "float64[::1]"),
    ("cuda.shared.array(0, float64)", "float64[::1]"),
])
def test_a_copy_of_an_array_sized_at_run_time_is_refused(source_module, receiver, signature):
    source = ("from kiln import cuda\nfrom numba import float64\n\n"
              f'@cuda.jit("void({signature}, float64[::1])")\n'
              f"def k(x, out):\n    y = ({receiver}).copy()\n    out[0] = y[0]\n")
    kernel = source_module("sized_at_run_time", source).k
    with pytest.raises(CompileError,
                       match=r"array\(float64, 1d, [CA]\)\.copy\(\) needs a shape known when the "
                             r"kernel compiles .*: kernels allocate no memory at run time"):
        kernel[1, 1](np.ones(3), np.zeros(1))


def test_a_copy_takes_no_arguments(source_module):
    source = ("import numpy as np\nfrom kiln import cuda\n\nC = np.ones(3)\n\n"
              '@cuda.jit("void(float64[::1])")\ndef k(out):\n    out[0] = C.copy("F")[0]\n')
    kernel = source_module("copy_order", source).k
    with pytest.raises(CompileError, match=r"no implementation of 'readonly array\(float64, 1d, C\)\.copy' accepts \(Literal\[str\]\(F\)\)"):
        kernel[1, 1](np.zeros(1))


def test_copies_assemble_for_every_default_architecture(tmp_path, kiln):
    (tmp_path / "copies.py").write_text(SOURCE)
    built = kiln("build", "copies.py", "--emit", "fatbin", "-o", "out", "--no-cache",
                 "--python", sys.executable, cwd=tmp_path, env=dict(os.environ))
    assert built.returncode == 0, built.stderr
    manifest = json.loads((tmp_path / "out" / "copies.manifest.json").read_text())
    assert len(manifest["specializations"]) == 3
    for spec in manifest["specializations"]:
        [name] = spec["files"]
        assert (tmp_path / "out" / name).read_bytes()[:4] == bytes.fromhex("50ed55ba")
