"""bfloat16 on the CPU engine, as numba-cuda's bindings (numba.cuda.bf16)
define it: every operation rounds its exact result to the nearest bfloat16
(ties to even), conversions from float64 and integers round once, and the
bindings' NaN, saturation and rounding rules hold. The reference rounds in
Python, independently of the compiler's helpers."""

import math

import numpy as np
import pytest

BF16_KERNELS = '''
import math
from kiln import cuda
from numba.cuda import float32, float64, int32, int64, uint8, uint16
from numba.cuda.bf16 import (bfloat16, hadd_sat, hdiv, hequ, hfma, hfma_relu, hisinf, hisnan,
                             hltu, hmax, hmax_nan, hmin, hne, hrcp, hsqrt, float64_to_bfloat16,
                             bfloat16_to_int32_rd, bfloat16_to_int32_rn, bfloat16_to_int32_ru,
                             bfloat16_to_uint8_rz, float2bfloat16_rz, float2bfloat16_rd, float2bfloat16_ru,
                             int2bfloat16_rz, int32_to_bfloat16_rd, ll2bfloat16_ru, bfloat16_as_short,
                             ushort_as_bfloat16)
from numba.cuda._internal.cuda_bf16 import nv_bfloat16


@cuda.jit
def arithmetic(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        a = bfloat16(x[i])
        b = bfloat16(y[i])
        out[i, 0] = float32(a + b)
        out[i, 1] = float32(a - b)
        out[i, 2] = float32(a * b)
        out[i, 3] = float32(a / b)
        out[i, 4] = float32(-a)
        out[i, 5] = float32(hfma(a, b, a))
        out[i, 6] = float32(hsqrt(a))
        out[i, 7] = float32(hdiv(a, b))


@cuda.jit
def from_float64(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = float32(float64_to_bfloat16(x[i]))


@cuda.jit
def from_int64(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = float32(bfloat16(x[i]))


@cuda.jit
def to_integers(x, out):
    i = cuda.grid(1)
    if i < x.size:
        a = bfloat16(x[i])
        out[i, 0] = int32(a)
        out[i, 1] = bfloat16_to_int32_rn(a)
        out[i, 2] = bfloat16_to_int32_rd(a)
        out[i, 3] = bfloat16_to_int32_ru(a)
        out[i, 4] = bfloat16_to_uint8_rz(a)


@cuda.jit
def nan_rules(x, y, flags, values):
    i = cuda.grid(1)
    if i < x.size:
        a = nv_bfloat16(x[i])
        b = nv_bfloat16(y[i])
        flags[i, 0] = a == b
        flags[i, 1] = a != b
        flags[i, 2] = hne(a, b)
        flags[i, 3] = hequ(a, b)
        flags[i, 4] = hltu(a, b)
        flags[i, 5] = hisnan(a)
        values[i, 0] = float32(hmax(a, b))
        values[i, 1] = float32(hmin(a, b))
        values[i, 2] = float32(hmax_nan(a, b))
        values[i, 3] = float32(hadd_sat(a, b))
        values[i, 4] = float32(hfma_relu(a, b, a))
        values[i, 5] = float32(hisinf(a))


@cuda.jit
def directed(x, n, out, bits, back):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = float32(float2bfloat16_rz(x[i]))
        out[i, 1] = float32(float2bfloat16_rd(x[i]))
        out[i, 2] = float32(float2bfloat16_ru(x[i]))
        out[i, 3] = float32(int2bfloat16_rz(n[i]))
        out[i, 4] = float32(int32_to_bfloat16_rd(n[i]))
        out[i, 5] = float32(ll2bfloat16_ru(int64(n[i])))
        bits[i] = bfloat16_as_short(bfloat16(x[i]))
        back[i] = float32(ushort_as_bfloat16(uint16(bits[i])))


@cuda.jit(device=True)
def mean(a, b):
    return (a + b) / bfloat16(2)


@cuda.jit
def types_and_device_functions(out, flags):
    x = nv_bfloat16(3.14)
    out[0] = float32(mean(x, bfloat16(5)))
    out[1] = float32(math.floor(x))
    out[2] = float32(hrcp(x))
    flags[0] = isinstance(x, nv_bfloat16)
    flags[1] = isinstance(x, (float, float32))
    flags[2] = isinstance(float32(x), (int, float32))


@cuda.jit
def mixes_bfloat16_with_float32(flag, out):
    x = bfloat16(1.0)
    if flag[0]:
        x = float32(2.0)
    out[0] = float32(x)
'''


def bf16(value):
    """`value` rounded to the nearest bfloat16, ties to even."""
    if math.isnan(value) or math.isinf(value) or value == 0:
        return value
    if abs(value) < 2.0**-126:  # subnormal: multiples of 2**-133
        return math.copysign(round(value / 2.0**-133) * 2.0**-133, value)
    mantissa, exponent = math.frexp(value)
    rounded = math.ldexp(round(mantissa * 256), exponent - 8)
    return math.copysign(math.inf, value) if abs(rounded) >= 2.0**128 else rounded


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("bf16_kernels", BF16_KERNELS)


def sample_values(count, seed):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(count) * 10.0 ** rng.integers(-6, 6, count)
    special = [0.0, -0.0, 1.0, -1.5, 3.0e38, -3.0e38, 1e-39, -2e-40, 7.0, 0.1, 65504.0]
    return np.concatenate([special, values]).astype(np.float32)


def test_arithmetic_rounds_each_exact_result_to_the_nearest_bfloat16(kernels):
    x = sample_values(400, 1)
    y = sample_values(400, 2)[::-1].copy()
    out = np.zeros((x.size, 8), np.float32)
    kernels.arithmetic[4, 128](x, y, out)
    def divide(a, b):
        if b:
            return bf16(a / b)
        return math.copysign(math.inf, a) * math.copysign(1, b) if a else math.nan

    for i, (a, b) in enumerate(zip(x.astype(float), y.astype(float))):
        a, b = bf16(a), bf16(b)
        square_root = bf16(math.sqrt(a)) if a >= 0 else math.nan
        expected = [bf16(a + b), bf16(a - b), bf16(a * b), divide(a, b), -a, bf16(a * b + a), square_root,
                    divide(a, b)]
        np.testing.assert_array_equal(out[i], np.array(expected, np.float32),
                                      err_msg=f"bfloat16 arithmetic of {a!r} and {b!r}")


def test_float64_rounds_once_where_rounding_through_float32_would_round_twice(kernels):
    # 1 + 2**-8 + 2**-30 is just above the tie between 1 and 1 + 2**-7:
    # through float32 it becomes the tie itself and then rounds to 1.
    x = np.array([1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30), 1 + 2**-8, 3.0e38, 3.5e38, 1e-45, 2.0**-133 * 1.5],
                 np.float64)
    out = np.zeros(x.size, np.float32)
    kernels.from_float64[1, 32](x, out)
    np.testing.assert_array_equal(out, np.array([bf16(v) for v in x], np.float32))
    assert out[0] == 1 + 2**-7


def test_integers_round_once_to_bfloat16(kernels):
    x = np.array([16777217, 2**24 + 2**16 + 1, -(2**31) + 1, 2**62 + 2**54, 255, 257, -3], np.int64)
    out = np.zeros(x.size, np.float32)
    kernels.from_int64[1, 32](x, out)
    np.testing.assert_array_equal(out, np.array([bf16(float(v)) for v in x], np.float32))


def test_conversions_to_integers_round_as_named_and_saturate(kernels):
    x = np.array([2.5, -2.5, 3.5, -0.75, 300.0, -7.0, np.nan, 3.0e9, -3.0e9], np.float32)
    out = np.zeros((x.size, 5), np.int64)
    kernels.to_integers[1, 32](x, out)
    big, small = 2**31 - 1, -(2**31)
    expected = [
        [2, 2, 2, 3, 2], [-2, -2, -3, -2, 0], [3, 4, 3, 4, 3], [0, -1, -1, 0, 0],
        [300, 300, 300, 300, 255], [-7, -7, -7, -7, 0], [0, 0, 0, 0, 0],
        [big, big, big, big, 255], [small, small, small, small, 0],
    ]
    np.testing.assert_array_equal(out, np.array(expected, np.int64))


def test_nan_saturation_and_unordered_comparisons_follow_cuda_bf16(kernels):
    nan, inf = math.nan, math.inf
    x = np.array([1.0, nan, 2.0, -inf, 0.75, -3.0], np.float32)
    y = np.array([nan, 1.0, 2.0, 1.0, 0.5, 1.0], np.float32)
    flags = np.zeros((x.size, 6), np.bool_)
    values = np.zeros((x.size, 6), np.float32)
    kernels.nan_rules[1, 32](x, y, flags, values)
    np.testing.assert_array_equal(flags, [
        [False, True, False, True, True, False],
        [False, True, False, True, True, True],
        [True, False, False, True, False, False],
        [False, True, True, False, True, False],
        [False, True, True, False, False, False],
        [False, True, True, False, True, False],
    ])
    np.testing.assert_array_equal(values, np.array([
        [1.0, 1.0, nan, 0.0, nan, 0],
        [1.0, 1.0, nan, 0.0, nan, 0],
        [2.0, 2.0, 2.0, 1.0, 6.0, 0],
        [1.0, -inf, 1.0, 0.0, 0.0, -1],
        [0.75, 0.5, 0.75, 1.0, 1.125, 0],
        [1.0, -3.0, 1.0, 0.0, 0.0, 0],
    ], np.float32))


def directed_reference(value):
    """(toward zero, down, up) of a value float32 holds exactly, from its
    bits: a bfloat16 is a float32's top half."""
    word = int(np.array([value], np.float32).view(np.uint32)[0])
    if math.isnan(value):
        return (value, value, value)
    toward_zero = np.array([(word >> 16) << 16], np.uint32).view(np.float32)[0].item()
    if toward_zero == value:
        return (value, value, value)
    away = np.array([((word >> 16) + 1) << 16], np.uint32).view(np.float32)[0].item()
    return (toward_zero, toward_zero, away) if value > 0 else (toward_zero, away, toward_zero)


def test_conversions_that_round_toward_zero_down_or_up(kernels):
    x = np.concatenate([sample_values(200, 3), [np.nan, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-41, -1e-41]])
    x = x.astype(np.float32)
    n = np.random.default_rng(4).integers(-(2**24), 2**24, x.size).astype(np.int32)
    n[:6] = [0, 1, -1, 257, -257, 2**24 - 1]
    out = np.zeros((x.size, 6), np.float32)
    bits = np.zeros(x.size, np.int64)
    back = np.zeros(x.size, np.float32)
    kernels.directed[2, 128](x, n, out, bits, back)
    for i in range(x.size):
        want = directed_reference(x[i].item()) + (directed_reference(float(n[i]))[0],
                                                 directed_reference(float(n[i]))[1],
                                                 directed_reference(float(n[i]))[2])
        np.testing.assert_array_equal(out[i], np.array(want, np.float32),
                                      err_msg=f"directed conversions of {x[i]!r} and {n[i]}")
    nearest = np.array([bf16(v) for v in x.astype(float)], np.float32)
    np.testing.assert_array_equal(bits, (nearest.view(np.uint32) >> 16).astype(np.int16),
                                  err_msg="bfloat16_as_short gives the bfloat16's bits")
    np.testing.assert_array_equal(back.view(np.uint32), nearest.view(np.uint32),
                                  err_msg="ushort_as_bfloat16 makes the bfloat16 of the bits back")


def test_device_functions_math_overloads_and_isinstance_see_bfloat16(kernels):
    out = np.zeros(3, np.float32)
    flags = np.zeros(3, np.bool_)
    kernels.types_and_device_functions[1, 1](out, flags)
    x = bf16(3.14)
    np.testing.assert_array_equal(out, np.array([bf16(bf16(x + 5) / 2), 3.0, bf16(1 / x)], np.float32))
    np.testing.assert_array_equal(flags, [True, False, True])


def test_a_variable_that_is_bfloat16_and_float32_is_refused(kernels):
    with pytest.raises(Exception, match=r"bfloat16.*float32|float32.*bfloat16"):
        kernels.mixes_bfloat16_with_float32[1, 1](np.zeros(1, np.bool_), np.zeros(1, np.float32))


def test_bfloat16_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    source = tmp_path / "bf16_signed.py"
    signatures = {"arithmetic": "void(float32[:], float32[:], float32[:, :])",
                  "directed": "void(float32[:], int32[:], float32[:, :], int64[:], float32[:])",
                  "nan_rules": "void(float32[:], float32[:], boolean[:, :], float32[:, :])",
                  "to_integers": "void(float32[:], int64[:, :])"}
    text = BF16_KERNELS
    for kernel, signature in signatures.items():
        text = text.replace(f"@cuda.jit\ndef {kernel}(", f'@cuda.jit("{signature}")\ndef {kernel}(')
    source.write_text(text)
    done = kiln("build", source, "--emit", "fatbin", "-o", tmp_path / "out")
    assert done.returncode == 0, f"bfloat16 kernels did not build for every architecture: {done.stderr}"
    assert (tmp_path / "out" / "bf16_signed.fatbin").stat().st_size > 0


def test_a_kernel_taking_bfloat16_is_refused_at_build_time(tmp_path, kiln):
    source = tmp_path / "bf16_argument.py"
    source.write_text("from kiln import cuda\nfrom numba.cuda.bf16 import bfloat16\n\n\n"
                      "@cuda.jit((bfloat16, cuda.float32[:]))\ndef store(value, out):\n    out[0] = float(value)\n")
    done = kiln("build", source, "--emit", "ptx", "-o", tmp_path / "out")
    assert done.returncode != 0 and "kernels cannot take arguments of type bfloat16" in done.stderr, done.stderr
