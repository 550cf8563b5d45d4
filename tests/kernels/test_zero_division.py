"""Division by zero, as numba-cuda's two error models define it.

Without debug (the NumPy error model) nothing raises: integer `//` and `%`
give 0, float `/` and `//` give x / 0 (an infinity or NaN), float `%` gives
NaN and 0 ** -n gives the minimum integer. With debug=True (the Python error
model) each of them raises ZeroDivisionError with Numba's message, which
the launch reports; the operations that do not divide by zero give their
usual results. Complex division by zero raises in both models (numba-cuda's
complex_div_impl raises explicitly), so without debug the thread stops.
"""

import re

import numpy as np
import pytest

import kiln_cpu

OPERATIONS = """
    if op == 0:
        out[i] = a[i] // b[i]
    elif op == 1:
        out[i] = a[i] % b[i]
    elif op == 2:
        out[i] = a[i] / b[i]
    elif op == 3:
        out[i] = a[i] ** b[i]
    else:
        q, r = divmod(a[i], b[i])
        out[i] = q + r
"""

SOURCE = f"""
from numba import cuda


@cuda.jit("void(int64[::1], int64[::1], float64[::1], int64)", debug=True, opt=False)
def checked_integers(a, b, out, op):
    i = cuda.grid(1)
{OPERATIONS}

@cuda.jit("void(int64[::1], int64[::1], float64[::1], int64)")
def unchecked_integers(a, b, out, op):
    i = cuda.grid(1)
{OPERATIONS}

@cuda.jit("void(float32[::1], float32[::1], float32[::1], int64)", debug=True, opt=False)
def checked_floats(a, b, out, op):
    i = cuda.grid(1)
{OPERATIONS}

@cuda.jit("void(float32[::1], float32[::1], float32[::1], int64)")
def unchecked_floats(a, b, out, op):
    i = cuda.grid(1)
{OPERATIONS}

@cuda.jit("void(complex128[::1], complex128[::1], complex128[::1])", debug=True, opt=False)
def checked_complex(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] / b[i]


@cuda.jit("void(complex128[::1], complex128[::1], complex128[::1], int32[::1])")
def unchecked_complex(a, b, out, done):
    i = cuda.grid(1)
    out[i] = a[i] / b[i]
    done[i] = 1
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("zerodiv"))


INTEGER_MESSAGES = {0: "integer division by zero", 1: "integer modulo by zero", 2: "division by zero",
                    3: "0 cannot be raised to a negative power", 4: "integer division by zero"}
FLOAT_MESSAGES = {0: "division by zero", 1: "modulo by zero", 2: "division by zero", 4: "division by zero"}


def integer_operands(op):
    a = np.array([7, -7, 0, 5, 9, -3, 4, 0], dtype=np.int64)
    b = np.array([2, 3, -1, 4, 0, 5, 2, 6], dtype=np.int64)
    if op == 3:
        a[2], a[4], b[4] = 1, 0, -2  # 1 ** -1, and 0 ** -2
    return a, b


@pytest.mark.parametrize("op", sorted(INTEGER_MESSAGES))
def test_integer_zero_division_raises_with_debug(kernels, op):
    a, b = integer_operands(op)
    out = np.zeros(a.size)
    pattern = r"tid=\[0, 0, 4\] ctaid=\[0, 0, 0\]: " + re.escape(INTEGER_MESSAGES[op])
    with pytest.raises(ZeroDivisionError, match=pattern):
        kernels.checked_integers[1, a.size](a, b, out, op)
    fine = np.arange(a.size) != 4
    safe = np.where(fine, b, 1)
    if op == 3:
        expected = np.array([x**y if y >= 0 else int(x**y) for x, y in zip(a.tolist(), safe.tolist())])
    else:
        expected = {0: a // safe, 1: a % safe, 2: a / safe, 4: a // safe + a % safe}[op]
    np.testing.assert_array_equal(out[fine], expected[fine], err_msg=f"the other threads of op {op}")


@pytest.mark.parametrize("op", sorted(INTEGER_MESSAGES))
def test_integer_zero_division_without_debug(kernels, op):
    a, b = integer_operands(op)
    out = np.full(a.size, -99.0)
    kernels.unchecked_integers[1, a.size](a, b, out, op)
    expected = {0: 0, 1: 0, 2: np.inf, 3: -(2**63), 4: 0}[op]
    assert out[4] == expected, f"op {op} by zero without debug"


def float_operands():
    a = np.array([7.5, -7.5, 0.0, 5.0, -3.0, 1.0], dtype=np.float32)
    b = np.array([2.0, 3.0, -1.0, 4.0, -0.0, 0.5], dtype=np.float32)
    return a, b


@pytest.mark.parametrize("op", sorted(FLOAT_MESSAGES))
def test_float_zero_division_raises_with_debug(kernels, op):
    a, b = float_operands()
    out = np.zeros(a.size, dtype=np.float32)
    pattern = r"tid=\[0, 0, 4\] ctaid=\[0, 0, 0\]: " + re.escape(FLOAT_MESSAGES[op])
    with pytest.raises(ZeroDivisionError, match=pattern):
        kernels.checked_floats[1, a.size](a, b, out, op)


@pytest.mark.parametrize("op", sorted(FLOAT_MESSAGES))
def test_float_zero_division_without_debug(kernels, op):
    a, b = float_operands()
    out = np.zeros(a.size, dtype=np.float32)
    kernels.unchecked_floats[1, a.size](a, b, out, op)
    # -3.0 / -0.0 is inf; -3.0 % -0.0 is NaN; divmod gives inf + NaN.
    expected = {0: np.inf, 1: np.nan, 2: np.inf, 4: np.nan}[op]
    np.testing.assert_equal(out[4], np.float32(expected), err_msg=f"op {op} by -0.0 without debug")


def test_float_power_does_not_raise(kernels):
    a, b = float_operands()
    a[4], b[4] = 0.0, -2.0
    out = np.zeros(a.size, dtype=np.float32)
    kernels.checked_floats[1, a.size](a, b, out, 3)
    assert out[4] == np.inf, "0.0 ** -2.0 is inf, even with debug (only integer powers raise)"


def test_complex_zero_division_raises_with_debug(kernels):
    a = np.array([1 + 2j, 3 - 1j, 5j], dtype=np.complex128)
    b = np.array([1j, 0j, 2 + 0j], dtype=np.complex128)
    out = np.zeros_like(a)
    with pytest.raises(ZeroDivisionError, match=r"tid=.*: complex division by zero"):
        kernels.checked_complex[1, 3](a, b, out)
    assert out[0] == a[0] / b[0] and out[2] == a[2] / b[2], "the other threads divide"


def test_complex_zero_division_stops_the_thread_without_debug(kernels):
    a = np.array([1 + 2j, 3 - 1j, 5j], dtype=np.complex128)
    b = np.array([1j, 0j, 2 + 0j], dtype=np.complex128)
    out = np.full(3, 7 + 7j)
    done = np.zeros(3, dtype=np.int32)
    kernels.unchecked_complex[1, 3](a, b, out, done)
    assert out[1] == 7 + 7j and done[1] == 0, "the thread dividing by 0j stops before storing"
    assert out[0] == a[0] / b[0] and out[2] == a[2] / b[2] and done[0] == done[2] == 1, "the others run"
