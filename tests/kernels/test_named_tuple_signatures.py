"""A named tuple's type in a kernel's signature, in Kiln's spelling
(Numba's NamedTuple takes the class itself): the built module's kernel
takes instances of a class of that name and reads their fields; other
tuples do not match it."""

from collections import namedtuple

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda


@cuda.jit('void(float64[::1], NamedTuple((int64, float64), "Point", ("x", "y")))')
def weigh(out, p):
    out[0] = p.x * 10 + p.y
    out[1] = p[1]
"""

Point = namedtuple("Point", ["x", "y"])


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("named_tuple_signatures"))


def test_a_built_kernel_reads_the_fields_of_its_named_tuple_argument(module):
    out = np.zeros(2)
    module.weigh[1, 1](out, Point(3, 0.5))
    np.testing.assert_array_equal(out, [30.5, 0.5])
    assert module.weigh.signatures == ["(array(float64, 1d, C), Point(int64, float64))"]


def test_a_plain_tuple_does_not_match_a_named_tuple_signature(module):
    with pytest.raises(TypeError, match="no specialization"):
        module.weigh[1, 1](np.zeros(2), (3, 0.5))


def test_named_tuple_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 1
