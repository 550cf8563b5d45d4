"""The operator module's functions in kernels, as Numba types them: each is
the operator it names (`operator.add(a, b)` is `a + b`, with Numba's
typing), called directly or passed to a device function. Checked on the
CPU engine against Python's operator module, and through ptxas for every
default architecture."""

import operator

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
import operator

from numba import cuda, float64, int64, void


@cuda.jit(device=True)
def fold(op, a, b):
    return op(a, b)


@cuda.jit(void(float64[::1], float64, float64))
def arithmetic(out, a, b):
    out[0] = operator.add(a, b)
    out[1] = operator.sub(a, b)
    out[2] = operator.mul(a, b)
    out[3] = operator.truediv(a, b)
    out[4] = operator.floordiv(a, b)
    out[5] = operator.mod(a, b)
    out[6] = operator.pow(a, b)
    out[7] = operator.neg(a)


@cuda.jit(void(int64[::1], int64, int64))
def integers(out, a, b):
    out[0] = operator.and_(a, b)
    out[1] = operator.or_(a, b)
    out[2] = operator.xor(a, b)
    out[3] = operator.lshift(a, 2)
    out[4] = operator.rshift(a, 1)
    out[5] = operator.invert(a)
    out[6] = operator.lt(a, b)
    out[7] = operator.ge(a, b)
    out[8] = fold(operator.mul, a, b)
    out[9] = fold(operator.floordiv, a, b)
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("operator_functions"))


def test_arithmetic_operator_functions_are_the_operators(module):
    out = np.zeros(8)
    module.arithmetic[1, 1](out, 7.5, 2.0)
    a, b = 7.5, 2.0
    expected = [operator.add(a, b), operator.sub(a, b), operator.mul(a, b), operator.truediv(a, b),
                operator.floordiv(a, b), operator.mod(a, b), operator.pow(a, b), operator.neg(a)]
    np.testing.assert_array_equal(out, expected)


def test_integer_and_comparison_operator_functions_also_when_passed_as_values(module):
    out = np.zeros(10, dtype=np.int64)
    module.integers[1, 1](out, 13, 5)
    a, b = 13, 5
    expected = [a & b, a | b, a ^ b, a << 2, a >> 1, ~a, a < b, a >= b, a * b, a // b]
    assert out.tolist() == expected


def test_operator_functions_assemble_for_every_default_architecture(tmp_path, kiln):
    fatbins = kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)
    assert len(fatbins) == 2, fatbins
