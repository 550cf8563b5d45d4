"""Named tuples (collections.namedtuple, typing.NamedTuple) as kernel
arguments, as Numba types them: a tuple whose class is part of its type.
Kernels read their fields by name and index and unpack them, pass them to
device functions, and compile a specialization per class: a plain tuple, or
another class with the same element types, is not the class a kernel was
compiled for."""

import gc
import importlib
import sys
from collections import namedtuple

import numpy as np
import pytest

KERNELS = '''
from collections import namedtuple
from typing import NamedTuple

from kiln import cuda

Point = namedtuple("Point", ["x", "y", "z"])
Reversed = namedtuple("Reversed", ["z", "y", "x"])


class Pair(NamedTuple):
    first: int
    second: int


@cuda.jit
def fields(out, p):
    out[0] = p.x + p.y * 10 + p.z * 100
    out[1] = p[2]
    x, y, z = p
    out[2] = x - y
    out[3] = len(p)


@cuda.jit(device=True)
def weigh(pair, k):
    return pair.first * k + pair.second


@cuda.jit
def passed_on(out, pair):
    out[0] = weigh(pair, 3)


@cuda.jit
def first_element(out, t):
    out[0] = t[0]
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    directory = tmp_path_factory.mktemp("named_tuples")
    (directory / "named_tuple_kernels.py").write_text(KERNELS)
    sys.path.insert(0, str(directory))
    try:
        yield importlib.import_module("named_tuple_kernels")
    finally:
        sys.path.remove(str(directory))
        sys.modules.pop("named_tuple_kernels", None)


def test_kernels_read_a_named_tuples_fields_by_name_and_index(module):
    out = np.zeros(4)
    module.fields[1, 1](out, module.Point(1, 2, 3.5))
    np.testing.assert_array_equal(out, [1 + 20 + 350.0, 3.5, -1, 3])
    assert module.fields.signatures == ["(array(float64, 1d, C), Point(int64, int64, float64))"]


def test_typing_named_tuples_pass_on_to_device_functions(module):
    out = np.zeros(1, dtype=np.int64)
    module.passed_on[1, 1](out, module.Pair(4, 5))
    assert out[0] == 4 * 3 + 5
    assert module.passed_on.signatures == ["(array(int64, 1d, C), Pair(int64 x 2))"]


def test_each_class_is_a_type_of_its_own(module):
    # The same element types in another class, whose fields are in the
    # other order: a kernel compiled for one must not run for the other.
    out = np.zeros(4)
    module.fields[1, 1](out, module.Point(1, 2, 3.0))
    np.testing.assert_array_equal(out, [1 + 20 + 300.0, 3.0, -1, 3])
    module.fields[1, 1](out, module.Reversed(1, 2, 3.0))
    np.testing.assert_array_equal(out, [3.0 + 20 + 100, 3.0, -1, 3])
    first = np.zeros(1, dtype=np.int64)
    for value in (module.Pair(7, 8), (9, 10), namedtuple("Other", "a b")(11, 12)):
        module.first_element[1, 1](first, value)
        assert first[0] == value[0]
    assert sorted(module.first_element.signatures) == [
        "(array(int64, 1d, C), Other(int64 x 2))",
        "(array(int64, 1d, C), Pair(int64 x 2))",
        "(array(int64, 1d, C), UniTuple(int64 x 2))",
    ]


def test_a_plain_tuple_does_not_run_a_kernel_compiled_for_a_named_one(module):
    out = np.zeros(1, dtype=np.int64)
    module.passed_on[1, 1](out, module.Pair(1, 2))
    with pytest.raises(Exception, match=r"UniTuple\(int64 x 2\) has no attribute 'first'"):
        module.passed_on[1, 1](out, (1, 2))


def test_classes_made_and_dropped_one_after_another_keep_their_own_fields(module):
    # A freed class's memory goes to the next one made: the dispatcher must
    # not take the new class for the old.
    out = np.zeros(4)
    for i in range(12):
        fields = ["x", "y", "z"] if i % 2 == 0 else ["z", "y", "x"]
        made = namedtuple(f"Made{i}", fields)
        module.fields[1, 1](out, made(1, 2, 3.0))
        x, y, z = (1, 2, 3.0) if i % 2 == 0 else (3.0, 2, 1)
        np.testing.assert_array_equal(out, [x + y * 10 + z * 100, 3.0, -1, 3], err_msg=f"class {i}")
        del made
        gc.collect()
