"""Device functions with `*args`, calls that unpack tuples, and slices of
tuples, as Numba compiles them: the arguments after a function's others
arrive as one tuple (of their types, literals dropped), which may be empty;
`f(*t)` passes t's items as arguments, wherever they stand among the
others; `t[a:b:c]` with bounds known at compile time is the tuple of the
elements Python's slice picks.
Checked on the CPU engine against Python, and through ptxas for every
default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
import cmath

from numba import complex128, cuda, float64, int64, void
from numba.types import UniTuple


@cuda.jit(device=True)
def total(*values):
    s = 0.0
    for v in values:
        s += v
    return s


@cuda.jit(device=True)
def count_after(scale, *rest):
    return scale * len(rest)


@cuda.jit(device=True)
def second(*values):
    return values[1]


@cuda.jit(void(float64[::1], float64))
def variadic(out, x):
    out[0] = total(1.0, 2.0, x)
    out[1] = total(x)
    out[2] = count_after(2.0, 1, 2, 3)
    out[3] = count_after(3.0)
    out[4] = second(1, x, 3.5)


@cuda.jit(device=True)
def weigh(a, b, c=100.0):
    return a + 10 * b + c


@cuda.jit(device=True)
def apply(func, *args):
    return func(*args)


@cuda.jit(void(float64[::1], complex128, UniTuple(int64, 2)))
def unpacking(out, z, t):
    out[0] = complex(*cmath.polar(z)).real
    out[1] = complex(*cmath.polar(z)).imag
    out[2] = weigh(*t)
    out[3] = weigh(0.5, *t[1:])
    out[4] = weigh(*t, *(2.0,))
    out[5] = apply(weigh, *t)
    out[6] = apply(weigh, 1.0, *t[:1], 3.0)
    out[7] = max(*t, 5)
    out[8] = total(*t, *t)


@cuda.jit(void(float64[::1], UniTuple(int64, 5)))
def slices(out, t):
    head = t[:2]
    tail = t[2:]
    backwards = t[::-1]
    every_other = t[-1::-2]
    out[0] = head[0] + head[1]
    out[1] = len(tail)
    out[2] = backwards[0]
    out[3] = every_other[1]
    out[4] = len(t[7:])
    out[5] = out.shape[-1:][0]
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("variadic"))


def test_star_args_gather_the_trailing_arguments(module):
    out = np.zeros(5)
    module.variadic[1, 1](out, 4.5)
    np.testing.assert_array_equal(out, [7.5, 4.5, 6.0, 0.0, 4.5])


def test_starred_arguments_are_the_tuples_items(module):
    z, t = 3 - 4j, (7, 9)
    out = np.zeros(9)
    module.unpacking[1, 1](out, z, t)

    def weigh(a, b, c=100.0):
        return a + 10 * b + c

    r, phi = __import__("cmath").polar(z)
    expected = [r, phi, weigh(*t), weigh(0.5, *t[1:]), weigh(*t, *(2.0,)), weigh(*t),
                weigh(1.0, *t[:1], 3.0), max(*t, 5), float(sum(t + t))]
    np.testing.assert_array_equal(out, expected)


def test_tuple_slices_pick_as_python_does(module):
    t = (10, 20, 30, 40, 50)
    out = np.zeros(6)
    module.slices[1, 1](out, t)
    expected = [sum(t[:2]), len(t[2:]), t[::-1][0], t[-1::-2][1], len(t[7:]), 6]
    np.testing.assert_array_equal(out, expected)


def test_variadic_and_slice_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 3
