"""numba-cuda's FP8 types (numba.cuda._internal.cuda_fp8) on the CPU engine,
with cuda_fp8.h's conversions: to E4M3 and E5M2 rounded to nearest (ties to
even) and saturating or not, E8M0 rounded toward zero or up to a power of
two, conversions back exact or rounded to nearest, to integers truncated and
saturated. The reference enumerates each format's values and picks the
nearest in exact rational arithmetic, independently of the compiler's
bit manipulations; numba-cuda's own expectations (test_fp8_bindings.py)
are checked as written there."""

import math
from fractions import Fraction

import numpy as np
import pytest

FP8_KERNELS = '''
from kiln import cuda
from numba.cuda import float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from numba.cuda.types import float16, bfloat16
from numba.cuda._internal.cuda_fp8 import (fp8_e4m3, fp8_e5m2, fp8_e8m0, cvt_float_to_fp8,
                                           cvt_double_to_fp8, cvt_bfloat16raw_to_fp8,
                                           cvt_bfloat16raw_to_e8m0, cvt_float_to_e8m0,
                                           cvt_double_to_e8m0, cvt_e8m0_to_bf16raw, saturation_t,
                                           fp8_interpretation_t)
from cuda.bindings.runtime import cudaRoundMode


@cuda.jit
def to_bits(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cvt_float_to_fp8(x[i], saturation_t.NOSAT, fp8_interpretation_t.E4M3)
        out[i, 1] = cvt_float_to_fp8(x[i], saturation_t.SATFINITE, fp8_interpretation_t.E4M3)
        out[i, 2] = cvt_double_to_fp8(float64(x[i]), saturation_t.NOSAT, fp8_interpretation_t.E5M2)
        out[i, 3] = cvt_double_to_fp8(float64(x[i]), saturation_t.SATFINITE, fp8_interpretation_t.E5M2)
        out[i, 4] = cvt_float_to_e8m0(x[i], saturation_t.SATFINITE, cudaRoundMode.cudaRoundZero)
        out[i, 5] = cvt_float_to_e8m0(x[i], saturation_t.NOSAT, cudaRoundMode.cudaRoundPosInf)


@cuda.jit
def through_types(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = float32(fp8_e4m3(x[i]))
        out[i, 1] = float32(fp8_e5m2(x[i]))
        out[i, 2] = float32(fp8_e8m0(x[i]))
        out[i, 3] = float32(float16(fp8_e5m2(x[i])))
        out[i, 4] = float32(float64(fp8_e4m3(x[i])))
        out[i, 5] = float32(bfloat16(fp8_e8m0(x[i])))


@cuda.jit
def to_integers(x, out):
    i = cuda.grid(1)
    if i < x.size:
        a = fp8_e5m2(x[i])
        out[i, 0] = int64(int8(a))
        out[i, 1] = int64(uint8(a))
        out[i, 2] = int64(int16(a))
        out[i, 3] = int64(uint16(a))
        out[i, 4] = int64(int32(a))
        out[i, 5] = int64(a)
        out[i, 6] = int64(uint32(fp8_e8m0(x[i])))
        out[i, 7] = 1 if fp8_e4m3(x[i]) else 0


@cuda.jit
def from_integers(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = float32(fp8_e4m3(x[i]))
        out[i, 1] = float32(fp8_e5m2(int32(x[i])))
        out[i, 2] = float32(fp8_e8m0(x[i]))
        out[i, 3] = float32(fp8_e8m0(uint64(x[i])))


@cuda.jit
def numba_cuda_expectations(result, bits):
    result[0] = float32(fp8_e5m2(float16(1.0)))
    result[1] = float32(fp8_e4m3(bfloat16(1.0)))
    result[2] = float32(fp8_e8m0(float64(2.0)))
    result[3] = float32(fp8_e4m3(int8(2)))
    result[4] = float32(fp8_e5m2(uint16(2)))
    result[5] = float32(fp8_e8m0(uint64(4)))
    nan = float32(float("nan"))
    result[6] = float32(fp8_e5m2(nan))
    result[7] = float32(fp8_e4m3(nan))
    result[8] = float32(fp8_e8m0(nan))
    result[9] = float32(float16(fp8_e4m3(nan)))
    raw = cvt_e8m0_to_bf16raw(uint8(127))
    bits[0] = raw.x
    raw = cvt_e8m0_to_bf16raw(uint8(254))
    bits[1] = cvt_bfloat16raw_to_fp8(raw, saturation_t.NOSAT, fp8_interpretation_t.E5M2)
    bits[2] = cvt_bfloat16raw_to_fp8(raw, saturation_t.SATFINITE, fp8_interpretation_t.E5M2)
    bits[3] = cvt_bfloat16raw_to_fp8(raw, saturation_t.NOSAT, fp8_interpretation_t.E4M3)
    bits[4] = cvt_bfloat16raw_to_fp8(raw, saturation_t.SATFINITE, fp8_interpretation_t.E4M3)
    half = cvt_e8m0_to_bf16raw(uint8(126))
    bits[5] = cvt_bfloat16raw_to_e8m0(half, saturation_t.NOSAT, cudaRoundMode.cudaRoundZero)
    bits[6] = cvt_bfloat16raw_to_e8m0(half, saturation_t.NOSAT, cudaRoundMode.cudaRoundPosInf)
    over = float64(1.7014118346046923e38) * float64(1.0000001)
    bits[7] = cvt_double_to_e8m0(over, saturation_t.NOSAT, cudaRoundMode.cudaRoundPosInf)
    bits[8] = cvt_double_to_e8m0(over, saturation_t.SATFINITE, cudaRoundMode.cudaRoundPosInf)


@cuda.jit(device=True)
def scaled(value, scale):
    return fp8_e4m3(float32(value) * scale)


@cuda.jit
def through_device_functions(out):
    stored = scaled(3, float32(10.4))
    out[0] = float32(stored)
'''

FORMATS = {
    # name: (exponent bits, significand bits, bias, largest finite, NaN on overflow)
    "e4m3": (4, 3, 7, 448.0, True),
    "e5m2": (5, 2, 15, 57344.0, False),
}


def fp8_values(name):
    """Every finite non-negative value of the format, with its bits."""
    exponent_bits, significand_bits, bias, largest, _ = FORMATS[name]
    values = []
    for bits in range(0x80):
        exponent, fraction = bits >> significand_bits, bits & ((1 << significand_bits) - 1)
        if exponent == 0:
            value = Fraction(fraction, 1 << significand_bits) * Fraction(2) ** (1 - bias)
        else:
            value = (1 + Fraction(fraction, 1 << significand_bits)) * Fraction(2) ** (exponent - bias)
        if value <= largest:
            values.append((value, bits))
    return values


def reference_bits(x, name, saturate):
    """cuda_fp8.h's conversion of x: the nearest value, ties to the even
    bit pattern; beyond the largest finite value, that value (saturating)
    or the overflow pattern."""
    _, _, _, largest, nan_on_overflow = FORMATS[name]
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    if math.isnan(x):
        return None
    overflow = (0x7E if nan_on_overflow else 0x7B) if saturate else (0x7F if nan_on_overflow else 0x7C)
    if math.isinf(x):
        return overflow | sign
    magnitude = Fraction(abs(x))
    values = fp8_values(name)
    top, top_bits = values[-1]
    next_up = 2 * top - values[-2][0]  # the value one step above the largest
    if magnitude >= (top + next_up) / 2 and not (magnitude == (top + next_up) / 2 and top_bits % 2 == 0):
        return overflow | sign
    best = min(values, key=lambda item: (abs(item[0] - magnitude), item[1] % 2))
    return best[1] | sign


def reference_e8m0(x, round_up, saturate):
    """E8M0 bits: the magnitude's power of two, rounded toward zero or up."""
    if math.isnan(x):
        return 0xFF
    if math.isinf(x):
        return 0xFE if saturate else 0xFF
    magnitude = Fraction(abs(x))
    exponent = -127
    while exponent < 128 and Fraction(2) ** (exponent + 1) <= magnitude:
        exponent += 1
    if round_up and magnitude > Fraction(2) ** exponent:
        exponent += 1
    bits = exponent + 127
    if bits >= 0xFF:
        return 0xFE if saturate else 0xFF
    return bits


def value_of(bits, name):
    if name == "e8m0":
        return math.nan if bits == 0xFF else 2.0 ** (bits - 127)
    for value, candidate in fp8_values(name):
        if candidate == bits & 0x7F:
            return -float(value) if bits & 0x80 else float(value)
    return math.nan


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("fp8_kernels", FP8_KERNELS)


def sample_values():
    rng = np.random.default_rng(8)
    scales = rng.choice([1e-7, 1e-4, 1e-2, 1.0, 10.0, 300.0, 3e4, 1e6, 1e38], 1500)
    values = rng.standard_normal(1500) * scales
    grid = [float(value) for name in FORMATS for value, _ in fp8_values(name)]
    midpoints = [(a + b) / 2 for a, b in zip(grid, grid[1:]) if a < b]
    special = [0.0, -0.0, math.inf, -math.inf, 448.0, 464.0, 465.0, 480.0, 57344.0, 61440.0,
               61439.0, 2.0**-9, 2.0**-10, 2.0**-17, 2.0**-16, 3e38, 2.0**127, 1.5 * 2.0**127,
               1e-45, 2.0**-127, 1.5 * 2.0**-127]
    return np.concatenate([special, values, grid, midpoints, np.negative(midpoints)]).astype(np.float32)


def test_conversions_to_e4m3_and_e5m2_round_to_nearest_even_and_saturate_as_asked(kernels):
    x = sample_values()
    out = np.zeros((x.size, 6), np.uint8)
    kernels.to_bits[(x.size + 127) // 128, 128](x, out)
    columns = [("e4m3", False), ("e4m3", True), ("e5m2", False), ("e5m2", True)]
    for column, (name, saturate) in enumerate(columns):
        for value, got in zip(x.tolist(), out[:, column].tolist()):
            want = reference_bits(value, name, saturate)
            if want is None:
                assert math.isnan(value_of(got, name)), f"{name}: NaN became {got:#x}"
            else:
                assert got == want, (f"{name} ({'SATFINITE' if saturate else 'NOSAT'}) of {value!r}: "
                                     f"{got:#04x}, want {want:#04x}")


def test_conversions_to_e8m0_round_toward_zero_or_up_to_a_power_of_two(kernels):
    x = sample_values()
    out = np.zeros((x.size, 6), np.uint8)
    kernels.to_bits[(x.size + 127) // 128, 128](x, out)
    for value, toward_zero, up in zip(x.tolist(), out[:, 4].tolist(), out[:, 5].tolist()):
        assert toward_zero == reference_e8m0(value, False, True), f"E8M0 toward zero of {value!r}: {toward_zero:#x}"
        assert up == reference_e8m0(value, True, False), f"E8M0 up of {value!r}: {up:#x}"


def test_the_types_convert_back_exactly_or_to_the_nearest_value_of_the_target(kernels):
    x = sample_values()
    out = np.zeros((x.size, 6), np.float32)
    kernels.through_types[(x.size + 127) // 128, 128](x, out)
    for row, value in zip(out, x.tolist()):
        e4m3 = reference_bits(value, "e4m3", True)
        e5m2 = reference_bits(value, "e5m2", True)
        e8m0 = reference_e8m0(value, True, True)
        expected = [value_of(e4m3, "e4m3") if e4m3 is not None else math.nan,
                    value_of(e5m2, "e5m2") if e5m2 is not None else math.nan,
                    value_of(e8m0, "e8m0")]
        expected += [expected[1], expected[0], expected[2]]
        expected[5] = float(np.float32(expected[5]))
        np.testing.assert_array_equal(row, np.array(expected, np.float32),
                                      err_msg=f"fp8 types of {value!r} converted back")


def test_conversions_to_integers_truncate_and_saturate_nan_to_zero(kernels):
    x = np.array([0.0, -0.0, 1.75, -1.75, 100.0, 300.0, -300.0, 57344.0, math.inf, -math.inf,
                  math.nan, 5e4, 40000.0, 3e38], np.float32)
    out = np.zeros((x.size, 8), np.int64)
    kernels.to_integers[1, x.size](x, out)
    for row, value in zip(out.tolist(), x.tolist()):
        bits = reference_bits(value, "e5m2", True)
        real = value_of(bits, "e5m2") if bits is not None else math.nan

        def saturated(low, high):
            return 0 if math.isnan(real) else int(max(low, min(high, math.trunc(real))))

        e8m0 = value_of(reference_e8m0(value, True, True), "e8m0")
        want = [saturated(-128, 127), saturated(0, 255), saturated(-2**15, 2**15 - 1),
                saturated(0, 2**16 - 1), saturated(-2**31, 2**31 - 1), saturated(-2**63, 2**63 - 1),
                0 if math.isnan(e8m0) else min(2**32 - 1, math.trunc(e8m0)),
                int(reference_bits(value, "e4m3", True) is None or reference_bits(value, "e4m3", True) & 0x7F != 0)]
        assert row == want, f"fp8 of {value!r} to integers and bool: {row}, want {want}"


def test_integers_convert_exactly_where_they_fit_and_e8m0_rounds_their_magnitude_up(kernels):
    x = np.array([0, 1, 2, 3, 17, -17, 100, 1000, -1000, 123456, 2**40 + 1, -(2**62), 2**63 - 1], np.int64)
    out = np.zeros((x.size, 4), np.float32)
    kernels.from_integers[1, x.size](x, out)

    def power_of_two_above(magnitude):
        return 2.0 ** (magnitude - 1).bit_length() if magnitude else 2.0**-127

    for row, value in zip(out.tolist(), x.tolist()):
        as_int32 = int(np.int64(value).astype(np.int32))
        want = [value_of(reference_bits(float(value), "e4m3", True), "e4m3"),
                value_of(reference_bits(float(as_int32), "e5m2", True), "e5m2"),
                float(np.float32(power_of_two_above(abs(value)))),
                float(np.float32(power_of_two_above(value % 2**64)))]
        assert row == want, f"{value} to fp8: {row}, want {want}"


def test_numba_cudas_own_expectations_hold(kernels):
    result = np.zeros(10, np.float32)
    bits = np.zeros(9, np.uint16)
    kernels.numba_cuda_expectations[1, 1](result, bits)
    np.testing.assert_array_equal(result[:6], [1.0, 1.0, 2.0, 2.0, 2.0, 4.0])
    assert np.isnan(result[6:]).all(), f"NaN did not stay NaN through FP8: {result[6:]}"
    assert bits[0] == 0x3F80, "E8M0 127 is 1.0, bfloat16 0x3F80"
    assert bits[1:5].tolist() == [0x7C, 0x7B, 0x7F, 0x7E], "2**127 overflows E5M2 and E4M3"
    assert bits[5:7].tolist() == [126, 126], "0.5 is E8M0 126 whichever way it rounds"
    assert bits[7:9].tolist() == [0xFF, 0xFE], "above 2**127 rounding up: NaN, or 2**127 saturated"


def test_device_functions_return_fp8_values(kernels):
    out = np.zeros(1, np.float32)
    kernels.through_device_functions[1, 1](out)
    assert out[0] == 32.0, "31.2 is between E4M3's 30 and 32, nearer 32"


def test_fp8_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    source = tmp_path / "fp8_signed.py"
    text = FP8_KERNELS.replace("@cuda.jit\ndef to_bits(", '@cuda.jit("void(float32[:], uint8[:, :])")\ndef to_bits(')
    text = text.replace("@cuda.jit\ndef through_types(",
                        '@cuda.jit("void(float32[:], float32[:, :])")\ndef through_types(')
    text = text.replace("@cuda.jit\ndef to_integers(", '@cuda.jit("void(float32[:], int64[:, :])")\ndef to_integers(')
    source.write_text(text)
    done = kiln("build", source, "--emit", "fatbin", "-o", tmp_path / "out")
    assert done.returncode == 0, f"FP8 kernels did not build for every architecture: {done.stderr}"
    assert (tmp_path / "out" / "fp8_signed.fatbin").stat().st_size > 0


@pytest.mark.parametrize("body, message", [
    ("out[0] = float32(fp8_e4m3(1.0) + fp8_e4m3(2.0))", "fp8_e4m3"),
    ("out[0] = float32(fp8_e4m3(fp8_e5m2(1.0)))", "fp8_e4m3"),
    ("out[0] = float32(fp8_e4m3(1j).real)", "complex128"),
])
def test_fp8_has_no_arithmetic_and_no_conversion_between_formats(tmp_path, kiln, body, message):
    source = tmp_path / "fp8_misuse.py"
    source.write_text("from kiln import cuda\nfrom numba.cuda import float32\n"
                      "from numba.cuda._internal.cuda_fp8 import fp8_e4m3, fp8_e5m2\n\n\n"
                      f"@cuda.jit('void(float32[:])')\ndef misuse(out):\n    {body}\n")
    done = kiln("build", source, "--emit", "ptx", "-o", tmp_path / "out")
    assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_kernel_taking_fp8_is_refused_at_build_time(tmp_path, kiln):
    source = tmp_path / "fp8_argument.py"
    source.write_text("from kiln import cuda\nfrom numba.cuda._internal.cuda_fp8 import fp8_e5m2\n\n\n"
                      "@cuda.jit((fp8_e5m2, cuda.float32[:]))\ndef store(value, out):\n    out[0] = value\n")
    done = kiln("build", source, "--emit", "ptx", "-o", tmp_path / "out")
    assert done.returncode != 0 and "kernels cannot take arguments of type fp8_e5m2" in done.stderr, done.stderr


def test_float_of_a_constant_string_is_folded_as_python_parses_it(file_source_module):
    module = file_source_module("float_strings", '''
from kiln import cuda


@cuda.jit
def parse(out):
    out[0] = float("nan")
    out[1] = float(" -Infinity ")
    out[2] = float("1_000.5e-1")
    out[3] = float("+.25")
''')
    out = np.zeros(4, np.float64)
    module.parse[1, 1](out)
    assert math.isnan(out[0]) and out[1:].tolist() == [-math.inf, 100.05, 0.25]
