"""Named tuples made inside kernels, as Numba makes them: a kernel calls a
named tuple class of its module (collections.namedtuple, typing.NamedTuple)
with positional or keyword arguments, and gets a value of the class's type
with each element typed as a value (`Point(1, 2.5)` is Point(int64,
float64)), read by field, index and unpacking, and passed to device
functions. A call that does not fit the fields is refused, naming the
class. Checked on the CPU engine against Python, and through ptxas for
every default architecture."""

import json
import os
import sys

import numpy as np
import pytest

from kiln._compiler import CompileError

KERNELS = '''
from collections import namedtuple
from typing import NamedTuple

from kiln import cuda

Point = namedtuple("Point", ["x", "y"])


class Pair(NamedTuple):
    first: float
    second: int


@cuda.jit(device=True)
def norm2(p):
    return p.x * p.x + p.y * p.y


@cuda.jit
def made(out, a):
    p = Point(a[0], 2)
    q = Point(y=3.5, x=1)
    r = Pair(second=4, first=a[1])
    out[0] = p.x + p.y
    out[1] = q.x * 10 + q[1]
    out[2] = r.first + r[1]
    out[3] = norm2(Point(3.0, 4.0))
    x, y = q
    out[4] = x - y
'''


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("named_tuples_made", KERNELS)


def test_kernels_make_named_tuples_by_position_and_keyword(kernels):
    out = np.zeros(5)
    kernels.made[1, 1](out, np.array([5.0, 6.0]))
    np.testing.assert_array_equal(out, [7.0, 13.5, 10.0, 25.0, -2.5])


@pytest.mark.parametrize("call, message", [
    ("Point(1, 2, 3)", r"'Point' takes 2 arguments \(3 given\)"),
    ("Point(1)", r"'Point' is missing the argument 'y'"),
    ("Point(1, z=2)", r"'Point' got an unexpected keyword argument 'z'"),
    ("Point(1, x=2)", r"'Point' got an unexpected keyword argument 'x'"),
])
def test_a_call_that_does_not_fit_the_fields_is_refused(source_module, call, message):
    source = ("from collections import namedtuple\nfrom kiln import cuda\n\n"
              'Point = namedtuple("Point", ["x", "y"])\n\n'
              f"@cuda.jit\ndef k(out):\n    p = {call}\n    out[0] = p[0]\n")
    kernel = source_module("misfit_named_tuples", source).k
    with pytest.raises(CompileError, match=message):
        kernel[1, 1](np.zeros(1))


def test_named_tuples_made_in_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    (tmp_path / "made.py").write_text(KERNELS.replace(
        "@cuda.jit\ndef made", '@cuda.jit("void(float64[::1], float64[::1])")\ndef made'))
    built = kiln("build", "made.py", "--emit", "fatbin", "-o", "out", "--no-cache",
                 "--python", sys.executable, cwd=tmp_path, env=dict(os.environ))
    assert built.returncode == 0, built.stderr
    manifest = json.loads((tmp_path / "out" / "made.manifest.json").read_text())
    [spec] = manifest["specializations"]
    [name] = spec["files"]
    assert (tmp_path / "out" / name).read_bytes()[:4] == bytes.fromhex("50ed55ba")
