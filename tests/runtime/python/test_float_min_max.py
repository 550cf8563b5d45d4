"""min and max of two float32 or float64 values as numba-cuda compiles them:
libdevice's fmin and fmax (PTX's min and max), which return the other
operand where one is NaN and order -0.0 below 0.0 (IEEE 754-2019's
minimumNumber and maximumNumber), unlike Python's builtins. Other min and
max calls keep Python's rule: the first operand unless the second is
strictly smaller (larger)."""

import math

import numpy as np
import pytest

KERNELS = '''
import numpy as np
from kiln import cuda


@cuda.jit
def two_floats(a, b, low, high):
    i = cuda.grid(1)
    if i < a.size:
        low[i] = min(a[i], b[i])
        high[i] = max(a[i], b[i])


@cuda.jit
def zeros_of_both_signs(high, low):
    # The operands differ only in their sign, one of them a constant, and
    # the whole block runs at once: nothing may pick the zero by operand order.
    i = cuda.grid(1)
    if i < high.size:
        y = np.float64(cuda.threadIdx.y)
        high[i] = max(-0.0, y)
        low[i] = min(0.0, -y)


@cuda.jit
def three_floats(a, b, low, high):
    i = cuda.grid(1)
    if i < a.size:
        low[i] = min(a[i], b[i], b[i])
        high[i] = max(a[i], b[i], b[i])
'''

NAN, INF = math.nan, math.inf
PAIRS = [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (2.5, -INF), (3.0, 3.0)]


def minimum_number(x, y):
    if math.isnan(x):
        return y
    if math.isnan(y) or x < y or (x == y and math.copysign(1.0, x) < 0):
        return x
    return y


def maximum_number(x, y):
    if math.isnan(x):
        return y
    if math.isnan(y) or x > y or (x == y and math.copysign(1.0, x) > 0):
        return x
    return y


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("float_min_max", KERNELS)


def bits(values):
    return np.asarray(values).view(np.uint8).reshape(len(values), -1).tolist()


@pytest.mark.parametrize("left, right", [(np.float32, np.float32), (np.float32, np.float64),
                                         (np.float64, np.float32), (np.float64, np.float64)])
def test_two_floats_ignore_nan_and_order_signed_zeros(kernels, left, right):
    a = np.array([x for x, _ in PAIRS], left)
    b = np.array([y for _, y in PAIRS], right)
    result = np.float32 if left == right == np.float32 else np.float64
    low, high = np.zeros(a.size, result), np.zeros(a.size, result)
    kernels.two_floats[1, 32](a, b, low, high)
    want_low = np.array([minimum_number(float(x), float(y)) for x, y in zip(a, b)], result)
    want_high = np.array([maximum_number(float(x), float(y)) for x, y in zip(a, b)], result)
    assert bits(low) == bits(want_low), f"min of {list(zip(a, b))}: {low.tolist()}, wanted {want_low.tolist()}"
    assert bits(high) == bits(want_high), f"max of {list(zip(a, b))}: {high.tolist()}, wanted {want_high.tolist()}"


def test_a_constant_zero_against_the_other_zero_in_a_whole_block(kernels):
    high, low = np.ones(256), np.ones(256)
    kernels.zeros_of_both_signs[2, 128](high, low)
    assert not np.signbit(high).any(), "max(-0.0, 0.0) is 0.0 in every thread"
    assert np.signbit(low).all(), "min(0.0, -0.0) is -0.0 in every thread"


def test_more_than_two_floats_keep_pythons_rule(kernels):
    a = np.array([x for x, _ in PAIRS])
    b = np.array([y for _, y in PAIRS])
    low, high = np.zeros(a.size), np.zeros(a.size)
    kernels.three_floats[1, 32](a, b, low, high)
    want_low = np.array([min(x, y, y) for x, y in zip(a.tolist(), b.tolist())])
    want_high = np.array([max(x, y, y) for x, y in zip(a.tolist(), b.tolist())])
    assert bits(low) == bits(want_low) and bits(high) == bits(want_high)


def test_the_gpu_code_uses_ptx_min_and_max(tmp_path, kiln):
    source = tmp_path / "float_min_max_signed.py"
    source.write_text(KERNELS.replace("@cuda.jit\ndef two_floats",
                                      '@cuda.jit("void(float64[:], float32[:], float64[:], float64[:])")\n'
                                      "def two_floats"))
    done = kiln("build", source, "--emit", "ptx", "--arch", "80", "-o", tmp_path)
    assert done.returncode == 0, done.stderr
    ptx = next(tmp_path.glob("two_floats*.ptx")).read_text()
    assert "min.f64" in ptx and "max.f64" in ptx, "min and max of two floats should be PTX's min.f64 and max.f64"
