"""Functions defined inside kernels and device functions, as Numba compiles
them: called where they are defined, they read the enclosing function's
variables as they are at the call (arrays, arguments, loop variables), as
Numba's inlining does; passed on as values (`consumer(inner, x)`), they
carry the constants they captured; they take defaults, keywords and
`*args`, define functions of their own and call each other. Lambdas are
such functions too.
Checked on the CPU engine against the same functions run by Python, and
through ptxas for every default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda, float64, int64, void


@cuda.jit(device=True)
def consumer(func, *args):
    return func(*args)


@cuda.jit(device=True)
def apply_twice(func, x):
    return func(func(x))


@cuda.jit(void(float64[::1], float64[::1], float64))
def reads_enclosing_values(out, data, scale):
    i = cuda.grid(1)
    offset = 3.0

    def helper(v):
        return v * scale + data[0] + offset

    if i < out.size:
        out[i] = helper(data[i])


@cuda.jit(void(int64[::1], int64))
def reads_variables_when_called(out, n):
    acc = 0

    def current():
        return acc

    for j in range(n):
        acc += j
        out[j] = current()


@cuda.jit(void(int64[::1], int64))
def passed_on(out, x):
    y = 10

    def add_y(z):
        return y + z

    def double(z):
        return 2 * z

    out[0] = consumer(add_y, x)
    out[1] = apply_twice(double, x)
    out[2] = consumer(double, 4)


@cuda.jit(void(int64[::1]))
def defaults_and_keywords(out):
    t = 12

    def inner(a, b, c, d1=123, d2=456):
        return d1 + d2 + t + a + b + c

    out[0] = inner(1, 2, 5, 91, 53)
    out[1] = inner(1, 2, 4)
    out[2] = inner(1, 2, 3, d2=7)
    out[3] = consumer(inner, 1, 2, 3)


@cuda.jit(void(int64[::1], int64))
def nested_and_siblings(out, x):
    base = 5

    def outer(v):
        def innermost(w):
            return w + base

        return innermost(v) * 2

    def a(v):
        return v + 1

    def b(v):
        return a(v) * 3

    def total(*vals):
        s = 0
        for v in vals:
            s += v
        return s

    out[0] = outer(x)
    out[1] = b(x)
    out[2] = total(x, 2, 3)


@cuda.jit(void(int64[::1], int64))
def captures_only_free_variables(out, x):
    def outer(v):
        def innermost(y):
            return y + 1

        return innermost(v)

    # `y` is a variable here too, assigned after the call: innermost's
    # parameter is not a capture of outer's.
    out[0] = outer(x)
    y = 5
    out[1] = y


@cuda.jit(void(float64[::1], float64[::1]))
def lambdas(out, data):
    i = cuda.grid(1)
    if i < out.size:
        scale = 3.0
        triple = lambda v: v * scale  # noqa: E731
        add = lambda a, b=1.0: a + b  # noqa: E731
        out[i] = triple(data[i]) + add(data[i]) + add(data[i], b=0.5) + (lambda: 2.0)()


@cuda.jit(void(int64[::1], int64))
def lambdas_passed_on_and_nested(out, x):
    y = 10
    out[0] = consumer(lambda z: y + z, x)
    out[1] = apply_twice(lambda z: 2 * z, x)
    make = lambda a: (lambda b: a * b)(a + 1)  # noqa: E731
    out[2] = make(x)
    # A lambda reads the enclosing variables as they are when it is called,
    # also through a variable, as does a function defined here.
    count = 0
    current = lambda: count  # noqa: E731
    count = 7
    out[3] = current()
    scale = 1

    def inner():
        return scale

    alias = inner
    scale = 9
    out[4] = alias()
    acc = 0
    add_acc = lambda v: v + acc  # noqa: E731
    for j in range(3):
        acc += j
        out[5 + j] = add_acc(100)
"""


def consumer(func, *args):
    return func(*args)


def apply_twice(func, x):
    return func(func(x))


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("nested"))


def test_calls_where_defined_read_the_enclosing_functions_values(module):
    data = np.arange(8, dtype=np.float64) + 0.5
    out = np.zeros(8)
    module.reads_enclosing_values[2, 4](out, data, 2.0)
    np.testing.assert_array_equal(out, data * 2.0 + data[0] + 3.0)


def test_captured_variables_are_read_when_the_function_is_called(module):
    out = np.zeros(6, dtype=np.int64)
    module.reads_variables_when_called[1, 1](out, 6)
    np.testing.assert_array_equal(out, np.cumsum(np.arange(6)))


def test_functions_passed_on_carry_the_constants_they_captured(module):
    out = np.zeros(3, dtype=np.int64)
    module.passed_on[1, 1](out, 5)
    np.testing.assert_array_equal(out, [consumer(lambda z: 10 + z, 5), apply_twice(lambda z: 2 * z, 5), 8])


def test_defaults_and_keywords_bind_as_in_python(module):
    def inner(a, b, c, d1=123, d2=456):
        return d1 + d2 + 12 + a + b + c

    out = np.zeros(4, dtype=np.int64)
    module.defaults_and_keywords[1, 1](out)
    expected = [inner(1, 2, 5, 91, 53), inner(1, 2, 4), inner(1, 2, 3, d2=7), consumer(inner, 1, 2, 3)]
    np.testing.assert_array_equal(out, expected)


def test_nested_functions_define_and_call_functions_of_their_own(module):
    out = np.zeros(3, dtype=np.int64)
    module.nested_and_siblings[1, 1](out, 4)
    np.testing.assert_array_equal(out, [(4 + 5) * 2, (4 + 1) * 3, 4 + 2 + 3])


def test_functions_capture_only_the_names_they_read_and_do_not_bind(module):
    out = np.zeros(2, dtype=np.int64)
    module.captures_only_free_variables[1, 1](out, 4)
    np.testing.assert_array_equal(out, [5, 5])


def test_lambdas_are_functions_defined_where_they_are(module):
    data = np.arange(6, dtype=np.float64) + 0.25
    out = np.zeros(6)
    module.lambdas[2, 4](out, data)
    np.testing.assert_array_equal(out, [3 * v + (v + 1.0) + (v + 0.5) + 2.0 for v in data])
    out = np.zeros(8, dtype=np.int64)
    module.lambdas_passed_on_and_nested[1, 1](out, 5)

    def make(a):
        return (lambda b: a * b)(a + 1)

    np.testing.assert_array_equal(
        out, [consumer(lambda z: 10 + z, 5), apply_twice(lambda z: 2 * z, 5), make(5), 7, 9, 100, 101, 103])


def test_nested_function_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 8
