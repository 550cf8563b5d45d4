"""`is` and `is not` on numbers and booleans, as Numba compiles them:
booleans compare by value (Python's True and False are singletons), other
numbers by value when their types are the same and never across types (a
literal has a type of its own). Checked on the CPU engine, and through
ptxas for every default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import boolean, cuda, int64, void


@cuda.jit(void(boolean, int64[::1]))
def push_when_true(pred, stack):
    i = 0
    if pred is True:
        stack[i] = 1
        i += 1
        stack[i] = 1


@cuda.jit(void(int64, int64, boolean[::1]))
def identities(x, y, out):
    out[0] = x is y
    out[1] = x is not y
    out[2] = x is 1
    out[3] = x is not 1
    out[4] = (x > y) is False
    out[5] = (x == y) is not True
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("identity"))


def test_a_boolean_is_true_when_it_equals_true(module):
    for pred, expected in ((True, [1, 1]), (False, [0, 666])):
        stack = np.array([0, 666])
        module.push_when_true[1, 1](pred, stack)
        np.testing.assert_array_equal(stack, expected, err_msg=f"pred={pred}")


def test_numbers_are_identical_only_with_their_own_type(module):
    for x, y in ((1, 1), (1, 2), (3, 1)):
        out = np.zeros(6, np.bool_)
        module.identities[1, 1](x, y, out)
        expected = [x == y, x != y, False, True, not x > y, not x == y]
        np.testing.assert_array_equal(out, expected, err_msg=f"x={x}, y={y}")


def test_identity_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 2
