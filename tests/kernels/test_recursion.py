"""Recursive device functions, as Numba types them: a function with a
declared return type calls itself (or another being typed) freely; one
without gets the type its other returns give, as the fixed point of typing
widens it; a function that can only return by recursing is an error.
Checked on the CPU engine against Python, and through ptxas for every
default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda, float64, int64, void


@cuda.jit("int64(int64)", device=True)
def fib_declared(n):
    if n < 2:
        return n
    return fib_declared(n - 1) + fib_declared(n - 2)


@cuda.jit(device=True)
def fib_inferred(n):
    if n < 2:
        return n
    return fib_inferred(n - 1) + fib_inferred(n - 2)


@cuda.jit(device=True)
def power(x, n):
    # The base case comes last in the source; its type reaches the
    # recursive call through the fixed point.
    if n > 0:
        return x * power(x, n - 1)
    return 1.0


@cuda.jit("int64(int64)", device=True)
def is_even(n):
    return 1 if n == 0 else is_odd(n - 1)


@cuda.jit("int64(int64)", device=True)
def is_odd(n):
    return 0 if n == 0 else is_even(n - 1)


@cuda.jit(void(int64[::1], float64[::1]))
def recursions(out, real):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = fib_declared(i) * 1000 + fib_inferred(i) + 100000 * is_even(i)
        real[i] = power(1.5, i)
"""


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("recursion"))


def test_recursive_device_functions(module):
    out = np.zeros(12, np.int64)
    real = np.zeros(12)
    module.recursions[1, 12](out, real)
    expected = [fib(i) * 1000 + fib(i) + 100000 * (i % 2 == 0) for i in range(12)]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_allclose(real, [1.5**i for i in range(12)], rtol=1e-15)


def test_runaway_recursion_is_a_compile_error(tmp_path):
    source = '''\\
from numba import cuda, int64, void


@cuda.jit(device=True)
def forever(n):
    return forever(n + 1)


@cuda.jit(void(int64[::1]))
def k(a):
    a[0] = forever(a[0])
'''
    with pytest.raises(kiln_cpu.CompileError, match="cannot type the recursive call to 'forever'"):
        kiln_cpu.compile_source(source, tmp_path)


def test_recursive_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 1
