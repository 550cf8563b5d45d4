"""Exception classes a module that stays Python defines, raised in its
kernels: with debug=True the launch raises the class itself, as Numba's
does, with the thread's position and the message."""

import numpy as np
import pytest

SOURCE = '''
from kiln import cuda


class MyError(Exception):
    """Raised by kernels."""


class BadValue(ValueError):
    pass


class WorseValue(BadValue):
    ...


@cuda.jit(debug=True, opt=False)
def check(x, out):
    i = cuda.grid(1)
    if x[i] == 1:
        raise MyError
    if x[i] == 2:
        raise BadValue("two")
    if x[i] == 3:
        raise WorseValue("three")
    out[i] = x[i]
'''


@pytest.fixture
def module(source_module):
    return source_module("user_exceptions", SOURCE)


def test_kernels_raise_the_modules_own_classes(module):
    out = np.zeros(4, np.int64)
    module.check[1, 4](np.array([0, 5, 6, 7]), out)
    np.testing.assert_array_equal(out, [0, 5, 6, 7])
    with pytest.raises(module.MyError) as raised:
        module.check[1, 4](np.array([0, 1, 0, 0]), out)
    assert str(raised.value) == "tid=[0, 0, 1] ctaid=[0, 0, 0]"
    with pytest.raises(module.BadValue, match=r"tid=\[0, 0, 2\] ctaid=\[0, 0, 0\]: two"):
        module.check[1, 4](np.array([0, 0, 2, 0]), out)
    with pytest.raises(ValueError) as raised:
        module.check[1, 4](np.array([3, 0, 0, 0]), out)
    assert type(raised.value) is module.WorseValue and str(raised.value).endswith(": three")
