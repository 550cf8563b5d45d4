"""Methods given jitted implementations with overload_method, as kernels
call them: `arr.method(n)` runs the typing function on the Numba types of
the receiver and the arguments, and compiles the implementation it returns
with the receiver as its first argument. Methods registered for a type
class (types.Array, types.Float) or for one type (types.float32) are found
by the receiver's type; Numba's own attributes come first; a typing
function that chooses nothing is an error that says so."""

import numpy as np
import pytest

pytest.importorskip("numba.cuda.extending")

KERNELS = '''
from kiln import cuda
from numba.cuda import types
from numba.cuda.extending import overload_method


@overload_method(types.Array, "head_total")
def array_head_total(arr, n):
    if isinstance(n, types.Integer):
        def head_total(arr, n):
            total = 0
            for i in range(n):
                total += arr[i]
            return total
        return head_total


@overload_method(types.Float, "scaled")
def float_scaled(x, factor):
    def scaled(x, factor):
        return x * factor + 0.5
    return scaled


@overload_method(types.Integer, "scaled")
def integer_scaled(x, factor):
    def scaled(x, factor):
        return x * factor * 100
    return scaled


@overload_method(types.float32, "halved")
def float32_halved(x):
    return lambda x: x / 2


@overload_method(types.UniTuple, "total")
def tuple_total(t):
    def total(t):
        s = 0
        for v in t:
            s += v
        return s
    return total


@overload_method(types.Array, "size")
def array_size_shadowed(arr):
    return lambda arr: -1


@overload_method(types.Array, "chooses_nothing")
def array_chooses_nothing(arr, x):
    if isinstance(x, types.Integer):
        return lambda arr, x: x


@overload_method(types.Array, "with_default")
def array_with_default(arr, a_kwarg=10):
    def with_default(arr, a_kwarg=10):
        return a_kwarg
    return with_default


@overload_method(types.Array, "not_literal")
def array_not_literal(arr, val):
    if isinstance(val, types.Integer) and not isinstance(val, types.Literal):
        return lambda arr, val: val


@cuda.jit
def defaults_and_keywords(a, res):
    res[0] = a.with_default()
    res[1] = a.with_default(20)
    res[2] = a.with_default(a_kwarg=30)
    res[3] = a.not_literal(0xCAFE)


@cuda.jit
def head_totals(a, out, n):
    out[0] = a.head_total(n)


@cuda.jit
def scale_each(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i].scaled(3)


@cuda.jit
def halve(a, out):
    out[0] = a[0].halved()


@cuda.jit
def tuple_totals(out, t):
    out[0] = t.total()
    out[1] = out.size


@cuda.jit
def refused(out, x):
    out[0] = out.chooses_nothing(x)
'''


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("overloaded_methods", KERNELS)


def test_a_method_of_arrays_takes_the_receiver_first(kernels):
    out = np.zeros(1)
    kernels.head_totals[1, 1](np.arange(1.0, 9.0), out, 3)
    assert out[0] == 1 + 2 + 3, "arr.head_total(3) did not sum the array's first three items"


def test_methods_take_defaults_keywords_and_see_plain_types(kernels):
    res = np.zeros(4)
    kernels.defaults_and_keywords[1, 1](np.arange(5), res)
    np.testing.assert_array_equal(res, [10, 20, 30, 0xCAFE])


def test_the_receivers_type_class_chooses_the_method(kernels):
    reals = np.zeros(4)
    kernels.scale_each[1, 4](np.arange(4.0), reals)
    np.testing.assert_array_equal(reals, np.arange(4.0) * 3 + 0.5)
    ints = np.zeros(4, np.int64)
    kernels.scale_each[1, 4](np.arange(4), ints)
    np.testing.assert_array_equal(ints, np.arange(4) * 300)


def test_a_method_of_one_type_is_that_types_only(kernels):
    out = np.zeros(1, np.float32)
    kernels.halve[1, 1](np.full(1, 5.0, np.float32), out)
    assert out[0] == 2.5
    from kiln._compiler import CompileError

    with pytest.raises(CompileError, match=r"float64.*has no attribute 'halved'"):
        kernels.halve[1, 1](np.full(1, 5.0), np.zeros(1))


def test_tuples_have_methods_and_numbas_own_attributes_come_first(kernels):
    out = np.zeros(2, np.int64)
    kernels.tuple_totals[1, 1](out, (1, 2, 3))
    np.testing.assert_array_equal(out, [6, 2], err_msg="t.total() or the array's own .size is wrong")


def test_a_typing_function_that_chooses_nothing_is_an_error(kernels):
    with pytest.raises(TypeError, match=r"the overload of 'chooses_nothing' has no implementation "
                                        r"for \(array\(float64, 1d, C\), float64\)"):
        kernels.refused[1, 1](np.zeros(1), 1.5)


def test_only_the_methods_user_code_overloads_reach_the_compiler(kernels):
    pytest.importorskip("numba.np.arraymath")  # registers Numba's own Array.sum, Array.take, ...
    from kiln import _overloads

    names = set(_overloads.method_values())
    assert {"Array.head_total", "Float.scaled", "Integer.scaled", "float32.halved"} <= names
    numbas = {"Array.sum", "Array.take", "Array.argmax"}
    assert not names & numbas, f"Numba's own methods went to the compiler: {sorted(names & numbas)}"
