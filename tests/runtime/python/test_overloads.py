"""Functions given jitted implementations with numba.extending.overload, as
kernels call them: the overload's typing function runs on the Numba types
of a call's arguments and chooses the implementation, which is compiled as
a device function: a choice by type, values it closes over (a branch on one
pruned, as Numba prunes it), the overloaded function itself. What cannot
be resolved is an error that says why, and leaves the module's other
kernels compiling; a module built ahead of time, where no typing function
can run, says so."""

import os
import sys

import numpy as np
import pytest

pytest.importorskip("numba.cuda.extending")

KERNELS = '''
import numpy as np
from kiln import cuda
from numba.cuda import types
from numba.cuda.extending import overload


def clamp(x, low, high):
    return min(max(x, low), high)


@overload(clamp)
def clamp_overload(x, low, high):
    if isinstance(x, types.Integer):
        def integer_clamp(x, low, high):
            return min(max(x, low), high) * 10
        return integer_clamp
    if isinstance(x, types.Float):
        def real_clamp(x, low, high):
            return min(max(x, low), high) + 0.5
        return real_clamp


def first(a, b=None):
    return a


@overload(first)
def first_overload(a, b=None):
    b_is_tuple = isinstance(b, (types.Tuple, types.UniTuple))

    def first_impl(a, b=None):
        if b_is_tuple is True:
            b = b[0]
        return a + b
    return first_impl


def answer(a):
    return 42


@overload(answer)
def answer_overload(a):
    return answer


def chooses_nothing(x):
    return x


@overload(chooses_nothing)
def chooses_nothing_overload(x):
    return None


def by_lambda(x):
    return x


@overload(by_lambda)
def by_lambda_overload(x):
    scale = 10
    return lambda x: x * scale + 1


@cuda.jit
def clamped(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = clamp(x[i], 2, 5)


@cuda.jit
def firsts(out, t):
    out[0] = first(3, t)
    out[1] = answer(out[0])


@cuda.jit
def refused(out, x):
    out[0] = chooses_nothing(x)


@cuda.jit
def lambda_made(out, x):
    out[0] = by_lambda(x)


@cuda.jit
def with_keywords(out, x):
    out[0] = clamp(x, low=1, high=2)


def with_defaults():
    pass


@overload(with_defaults)
def with_defaults_overload(out, x, y=5, z=6):
    def impl(out, x, y=5, z=6):
        out[0], out[1] = x + y, z
    return impl


@cuda.jit
def defaults_and_keywords(out, a, b):
    with_defaults(out, a, z=b)


@cuda.jit
def starred(out, t):
    with_defaults(out, *t, z=t[1] * 2)


@cuda.jit
def plain(out):
    out[0] = 7
'''


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("overloaded", KERNELS)


def test_the_typing_function_chooses_by_the_arguments_types(kernels):
    ints = np.zeros(8, np.int64)
    kernels.clamped[1, 8](ints, np.arange(8))
    np.testing.assert_array_equal(ints, np.clip(np.arange(8), 2, 5) * 10)
    reals = np.zeros(8)
    kernels.clamped[1, 8](reals, np.arange(8.0))
    np.testing.assert_array_equal(reals, np.clip(np.arange(8.0), 2, 5) + 0.5)


def test_implementations_read_what_they_close_over_and_the_function_itself(kernels):
    out = np.zeros(2, np.int64)
    kernels.firsts[1, 1](out, (4,))
    np.testing.assert_array_equal(out, [7, 42])


def test_a_typing_function_that_chooses_nothing_is_an_error(kernels):
    with pytest.raises(TypeError, match=r"the overload of 'chooses_nothing' has no implementation "
                                        r"for \(float64\)"):
        kernels.refused[1, 1](np.zeros(1), 1.5)


def test_an_implementation_written_as_a_lambda_compiles_as_a_device_function(kernels):
    out = np.zeros(1, np.int64)
    kernels.lambda_made[1, 1](out, 3)
    assert out[0] == 3 * 10 + 1, "the lambda the typing function returned did not run"
    kernels.plain[1, 1](out)
    assert out[0] == 7


def test_keyword_and_starred_arguments_reach_the_typing_function_as_keywords(kernels):
    out = np.zeros(1)
    kernels.with_keywords[1, 1](out, 1.5)
    assert out[0] == min(max(1.5, 1), 2) + 0.5, "clamp(x, low=1, high=2) chose the wrong implementation"
    kernels.with_keywords[1, 1](out, 7.0)
    assert out[0] == 2.5
    ints = np.zeros(2, np.int64)
    kernels.defaults_and_keywords[1, 1](ints, 1, 2)
    np.testing.assert_array_equal(ints, [6, 2], err_msg="a left-out argument must take its default")
    kernels.starred[1, 1](ints, (4, 3))
    np.testing.assert_array_equal(ints, [7, 6], err_msg="f(out, *t) must pass t's items")


def test_a_module_built_ahead_of_time_names_the_call_it_cannot_resolve(tmp_path, kiln):
    (tmp_path / "ahead.py").write_text(KERNELS)
    built = kiln("build", "ahead.py", "--arch", "80", "-o", "out", "--no-cache",
                 "--python", sys.executable, "--signature", "clamped=void(int64[::1], int64[::1])",
                 cwd=tmp_path, env=dict(os.environ))
    assert built.returncode != 0
    assert ("'clamp' is implemented with numba.extending.overload, and its typing function has not "
            "chosen an implementation for (int64, int64, int64): Kiln runs that Python function where "
            "kernels compile as they are first called (in a module that stays Python), not in a "
            "module built ahead of time") in built.stderr, built.stderr
