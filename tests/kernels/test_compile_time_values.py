"""Values that exist only at compile time (None, tuples holding None) compile
away, on both targets, without disturbing the values around them."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda, int64, void


@cuda.jit(device=True)
def scaled(x, factor=None):
    if factor is None:
        return x
    return x * factor


@cuda.jit(void(int64[::1]))
def tuple_with_none(out):
    pair = (7, None)
    nested = (pair, 3)
    out[0] = pair[0]
    out[1] = nested[1]
    out[2] = nested[0][0] + 1


@cuda.jit(void(int64[::1]))
def none_default(out):
    out[0] = scaled(5)
    out[1] = scaled(5, 3)
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("compile_time"))


def test_tuples_holding_none_index_to_their_other_elements(module):
    out = np.zeros(3, dtype=np.int64)
    module.tuple_with_none[1, 1](out)
    assert out.tolist() == [7, 3, 8]


def test_a_none_default_argument_is_none_in_the_callee(module):
    out = np.zeros(2, dtype=np.int64)
    module.none_default[1, 1](out)
    assert out.tolist() == [5, 15]
