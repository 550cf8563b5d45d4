"""Enum members (enum.Enum, enum.IntEnum) as kernel arguments and values, as
Numba types them: Enum<int64>(Color), IntEnum<int64>(Shape), the class part
of the type. Members of one class compare their values (`is` too); `is` is
False across classes; an IntEnum member is also an integer (arithmetic,
ordering, casts, integer parameters); an Enum member is no number. Each
class compiles a specialization of its own. Checked on the CPU engine
against Python, and through ptxas for every default architecture."""

import json
import os
import sys

import numpy as np
import pytest

from kiln._compiler import CompileError

KERNELS = '''
import math
from enum import Enum, IntEnum

import numpy as np
from kiln import cuda
from numba import int16, int32


class Color(Enum):
    RED = 1
    GREEN = 2


class Flavor(Enum):
    VANILLA = 1


class Shape(IntEnum):
    CIRCLE = 2
    SQUARE = 500


class Level(IntEnum):
    TWO = 2
    MINUS = -3


class Planet(Enum):
    EARTH = (5.976e24, 6.37814e6)
    MARS = (6.421e23, 3.3972e6)


@cuda.jit
def compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b


@cuda.jit
def against_constants(a, out):
    out[0] = a == Color.GREEN
    out[1] = a.value
    out[2] = a is Color.RED
    out[3] = Color["GREEN"].value


@cuda.jit
def as_integer(s, out):
    out[0] = s + 1
    out[1] = s * Shape.SQUARE
    out[2] = s < Shape.SQUARE
    out[3] = int16(s) - int32(Level.MINUS)


@cuda.jit
def integer_uses(s, a, out):
    for i in range(Shape.CIRCLE):
        out[i] = a[s] + i
    out[2] = math.sqrt(s * 8) + min(s, 7)
    out[3] = a[Level.TWO - 1]


@cuda.jit("void(int64, int64[::1])")
def integer_parameter(n, out):
    out[0] = n * 2


@cuda.jit
def tuple_value(p, out):
    mass, radius = p.value
    out[0] = mass
    out[1] = radius
    out[2] = p == Planet.EARTH


@cuda.jit(device=True)
def pick(flag):
    if flag:
        return Color.GREEN
    return Color.RED


@cuda.jit
def returned(flag, out):
    out[0] = pick(flag).value
'''


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("enum_kernels", KERNELS)


def pairs(kernels):
    Color, Shape, Level, Planet = kernels.Color, kernels.Shape, kernels.Level, kernels.Planet
    return [(Color.RED, Color.RED), (Color.RED, Color.GREEN), (Planet.EARTH, Planet.EARTH),
            (Planet.EARTH, Planet.MARS), (Shape.CIRCLE, Level.TWO), (Shape.SQUARE, Shape.SQUARE),
            (Level.TWO, Level.MINUS)]


def test_comparisons_and_identity_are_pythons(kernels):
    for a, b in pairs(kernels):
        out = np.zeros(4, np.bool_)
        kernels.compare[1, 1](a, b, out)
        assert out.tolist() == [a == b, a != b, a is b, a is not b], (a, b)


def test_members_compare_with_the_classes_constants(kernels):
    out = np.zeros(4)
    kernels.against_constants[1, 1](kernels.Color.RED, out)
    np.testing.assert_array_equal(out, [False, 1, True, 2])
    kernels.against_constants[1, 1](kernels.Color.GREEN, out)
    np.testing.assert_array_equal(out, [True, 2, False, 2])


def test_an_int_enum_member_is_an_integer(kernels):
    out = np.zeros(4, np.int64)
    kernels.as_integer[1, 1](kernels.Shape.CIRCLE, out)
    np.testing.assert_array_equal(out, [3, 1000, 1, 5])
    kernels.integer_parameter[1, 1](kernels.Shape.SQUARE, out)
    assert out[0] == 1000


def test_an_int_enum_member_counts_indexes_and_takes_builtins(kernels):
    out = np.zeros(4)
    kernels.integer_uses[1, 1](kernels.Shape.CIRCLE, np.arange(10.0, 15.0), out)
    np.testing.assert_array_equal(out, [12, 13, 6, 11])


def test_a_member_of_tuples_is_read_by_value(kernels):
    out = np.zeros(3)
    kernels.tuple_value[1, 1](kernels.Planet.MARS, out)
    np.testing.assert_array_equal(out, [6.421e23, 3.3972e6, 0])
    kernels.tuple_value[1, 1](kernels.Planet.EARTH, out)
    np.testing.assert_array_equal(out, [5.976e24, 6.37814e6, 1])


def test_device_functions_return_members(kernels):
    out = np.zeros(1, np.int64)
    kernels.returned[1, 1](True, out)
    assert out[0] == 2


def test_each_class_is_a_specialization_of_its_own(kernels):
    out = np.zeros(4, np.bool_)
    kernels.compare[1, 1](kernels.Color.RED, kernels.Color.RED, out)
    kernels.compare[1, 1](kernels.Flavor.VANILLA, kernels.Flavor.VANILLA, out)
    kernels.compare[1, 1](1, 1, out)
    signatures = [str(signature) for signature in kernels.compare.signatures]
    for wanted in ("Enum<int64>(Color), Enum<int64>(Color)",
                   "Enum<int64>(Flavor), Enum<int64>(Flavor)", "int64, int64"):
        assert any(wanted in signature for signature in signatures), signatures


@pytest.mark.parametrize("body, arguments, message", [
    ("out[0] = a + 1", "Color.RED, Color.RED", r"operator '\+' is not supported between Enum<int64>\(Color\) and "
                                    r"Literal\[int\]\(1\)"),
    ("out[0] = a == b", "Color.RED, Flavor.VANILLA",
     r"operator '==' is not supported between Enum<int64>\(Color\) and Enum<int64>\(Flavor\)"),
    ("out[0] = a < b", "Color.RED, Color.RED", r"operator '<' is not supported between Enum<int64>\(Color\)"),
    ("out[0] = len(a.name)", "Color.RED, Color.RED", r"Enum<int64>\(Color\) has no attribute 'name'"),
])
def test_what_numba_refuses_of_enum_members_is_refused(source_module, body, arguments, message):
    source = ("from enum import Enum\nfrom kiln import cuda\n\n"
              "class Color(Enum):\n    RED = 1\n\nclass Flavor(Enum):\n    VANILLA = 1\n\n"
              f"@cuda.jit\ndef k(out, a, b):\n    {body}\n")
    module = source_module("refused_enums", source)
    values = eval(f"({arguments})", vars(module))
    with pytest.raises(CompileError, match=message):
        module.k[1, 1](np.zeros(1), *values)


def test_signatures_name_enum_members_and_assemble_for_every_architecture(tmp_path, kiln):
    (tmp_path / "enum_signatures.py").write_text(
        "from enum import Enum, IntEnum\nfrom kiln import cuda\n\n"
        "class Color(Enum):\n    RED = 1\n\nclass Shape(IntEnum):\n    CIRCLE = 2\n\n"
        "@cuda.jit(\"void(EnumMember('Color', int64), IntEnumMember('Shape', int64), int64[::1])\")\n"
        "def k(c, s, out):\n    out[0] = (c == Color.RED) + s * 2\n")
    built = kiln("build", "enum_signatures.py", "--emit", "fatbin", "-o", "out", "--no-cache",
                 "--python", sys.executable, cwd=tmp_path, env=dict(os.environ))
    assert built.returncode == 0, built.stderr
    manifest = json.loads((tmp_path / "out" / "enum_signatures.manifest.json").read_text())
    [spec] = manifest["specializations"]
    assert spec["args"][:2] == ["Enum<int64>(Color)", "IntEnum<int64>(Shape)"], spec
    [name] = spec["files"]
    assert (tmp_path / "out" / name).read_bytes()[:4] == bytes.fromhex("50ed55ba")
