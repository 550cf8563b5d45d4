"""numba-cuda's FP8 bindings (numba.cuda._internal.cuda_fp8) for kernels.

Compiled by Kiln like any kernel module, for every target. The conversions
are those of CUDA's cuda_fp8.h, bit for bit: its portable definitions,
which GPUs with FP8 instructions (cvt.*.e4m3x2, cvt.*.ue8m0x2) agree with.
A conversion returns the 8 storage bits (uint8); the front end reinterprets
them as fp8_e4m3, fp8_e5m2 or fp8_e8m0 where a kernel makes one of those
from a number, and calls `fp8_to_float32` and `to_signed`/`to_unsigned`
where a kernel converts one back.

The formats:
  - E4M3: 4 exponent bits (bias 7), 3 significand bits, no infinities, NaN
    where all other bits are set (0x7F, 0xFF); largest finite 448.
  - E5M2: 5 exponent bits (bias 15), 2 significand bits, as IEEE's binary
    formats: infinities 0x7C/0xFC, NaNs above; largest finite 57344.
  - E8M0: an unsigned power of two, 2**(bits - 127), from 2**-127 to
    2**127; 0xFF is NaN. There is no zero.
"""

import math
from enum import IntEnum

from numba import cuda, float32, float64, int64, uint8, uint16, uint32, uint64
from numba.cuda import libdevice, uint16x1


class saturation_t(IntEnum):
    NOSAT = 0
    SATFINITE = 1


class fp8_interpretation_t(IntEnum):
    E4M3 = 0
    E5M2 = 1


# cudaRoundMode (cuda.bindings.runtime): E8M0 conversions round toward zero
# or up; any other mode rounds up, as cuda_fp8.h's definitions do.
ROUND_ZERO = 1

# __nv_bfloat16_raw, a bfloat16's bits as `.x`, is a uint16x1.
bfloat16_raw = uint16x1


@cuda.jit(device=True)
def power_of_two(exponent):
    """2.0**exponent for -1022 <= exponent <= 1023, exactly."""
    return libdevice.longlong_as_double(int64(exponent + 1023) << 52)


@cuda.jit(device=True)
def round_half_even(value):
    """The integer nearest to a non-negative value below 2**52, ties to even."""
    whole = math.floor(value)
    rest = value - whole
    if rest > 0.5 or (rest == 0.5 and math.fmod(whole, 2.0) == 1.0):
        whole += 1.0
    return whole


@cuda.jit(device=True)
def cvt_double_to_fp8(x, saturate, interpretation):
    """x rounded to the nearest E4M3 or E5M2 value, ties to even. A value
    beyond the largest finite one (an infinity included) saturates to it
    under SATFINITE; under NOSAT it becomes E4M3's NaN or E5M2's infinity.
    """
    x = float64(x)
    bits = uint64(libdevice.double_as_longlong(x))
    sign = uint8(0x80) if bits >> uint64(63) else uint8(0)
    if interpretation == fp8_interpretation_t.E4M3:
        bias = 7
        significand_bits = 3
        max_finite = 448.0
        max_finite_bits = uint8(0x7E)
        overflow_bits = uint8(0x7F)
    else:
        bias = 15
        significand_bits = 2
        max_finite = 57344.0
        max_finite_bits = uint8(0x7B)
        overflow_bits = uint8(0x7C)
    if x != x:
        if interpretation == fp8_interpretation_t.E4M3:
            return uint8(uint8(0x7F) | sign)
        # A quiet NaN, keeping the two leading bits of the payload.
        payload = (bits >> uint64(50)) & uint64(3)
        return uint8(uint64(0x7E) | payload | uint64(sign))
    magnitude = abs(x)
    min_normal_exponent = 1 - bias
    exponent = int64((bits >> uint64(52)) & uint64(0x7FF)) - 1023
    if exponent < min_normal_exponent:
        exponent = min_normal_exponent
    if magnitude > 2.0 * max_finite:
        rounded = magnitude
    else:
        quantum = power_of_two(exponent - significand_bits)
        rounded = round_half_even(magnitude / quantum) * quantum
    if rounded > max_finite:
        if saturate == saturation_t.SATFINITE:
            return uint8(max_finite_bits | sign)
        return uint8(overflow_bits | sign)
    if rounded < power_of_two(min_normal_exponent):
        # Subnormal (or zero): a multiple of the smallest subnormal.
        steps = rounded / power_of_two(min_normal_exponent - significand_bits)
        return uint8(uint8(steps) | sign)
    rounded_bits = uint64(libdevice.double_as_longlong(rounded))
    biased = int64((rounded_bits >> uint64(52)) & uint64(0x7FF)) - 1023 + bias
    fraction = (rounded_bits >> uint64(52 - significand_bits)) & uint64((1 << significand_bits) - 1)
    return uint8((biased << significand_bits) | int64(fraction) | int64(sign))


@cuda.jit(device=True)
def cvt_float_to_fp8(x, saturate, interpretation):
    return cvt_double_to_fp8(float64(float32(x)), saturate, interpretation)


@cuda.jit(device=True)
def bfloat16_bits_to_float32(bits):
    return libdevice.int_as_float(int64(bits) << 16)


@cuda.jit(device=True)
def cvt_bfloat16raw_to_fp8(raw, saturate, interpretation):
    return cvt_double_to_fp8(float64(bfloat16_bits_to_float32(raw.x)), saturate, interpretation)


@cuda.jit(device=True)
def bfloat16_bits_to_e8m0(bits, saturate, rounding):
    """The exponent of a bfloat16 (its sign ignored), rounded up where
    rounding is not toward zero and the significand is not zero."""
    bits = uint16(bits)
    magnitude = bits & uint16(0x7FFF)
    result = (bits >> uint16(7)) & uint16(0xFF)
    if rounding != ROUND_ZERO:
        if (bits & uint16(0x7F)) != 0 and magnitude > 0x0040 and magnitude < 0x7F80:
            result += uint16(1)
    # Finite values (and infinities) beyond 2**127 saturate to it.
    if saturate == saturation_t.SATFINITE and magnitude <= 0x7F80 and result == 0xFF:
        result = uint16(0xFE)
    return uint8(result)


@cuda.jit(device=True)
def cvt_bfloat16raw_to_e8m0(raw, saturate, rounding):
    return bfloat16_bits_to_e8m0(raw.x, saturate, rounding)


@cuda.jit(device=True)
def cvt_float_to_e8m0(x, saturate, rounding):
    """Through the bfloat16 rounded toward zero, or up from |x|."""
    bits = uint32(libdevice.float_as_int(float32(x)))
    magnitude = bits & uint32(0x7FFFFFFF)
    if magnitude > 0x7F800000:
        high = uint32(0x7FFF)  # NaN
    elif rounding == ROUND_ZERO:
        high = bits >> uint32(16)
    else:
        high = (magnitude >> uint32(16)) + uint32((magnitude & uint32(0xFFFF)) != 0)
    return bfloat16_bits_to_e8m0(high, saturate, rounding)


@cuda.jit(device=True)
def double_to_float_with_sticky_bit(x):
    """x rounded to float32 toward zero, with the last bit set where that
    lost anything: a float32 that rounds to E8M0 as x does."""
    x = float64(x)
    nearest = float32(x)
    back = float64(nearest)
    bits = uint32(libdevice.float_as_int(nearest))
    if (x > 0.0 and back > x) or (x < 0.0 and back < x):
        bits -= uint32(1)
    if back != x and (bits & uint32(0x7FFFFFFF)) <= 0x7F800000:
        bits |= uint32(1)
    return libdevice.int_as_float(int64(bits))


@cuda.jit(device=True)
def cvt_double_to_e8m0(x, saturate, rounding):
    return cvt_float_to_e8m0(double_to_float_with_sticky_bit(x), saturate, rounding)


@cuda.jit(device=True)
def cvt_e8m0_to_bf16raw(x):
    x = uint8(x)
    if x == 0xFF:
        return bfloat16_raw(uint16(0x7FFF))
    if x == 0:
        # 2**-127: a subnormal bfloat16.
        return bfloat16_raw(uint16(0x0040))
    return bfloat16_raw(uint16(uint16(x) << uint16(7)))


@cuda.jit(device=True)
def integer_to_e8m0(value):
    """An integer's magnitude rounded up to a power of two, as E8M0 (zero
    is 2**-127, the smallest)."""
    if value >= 0:
        magnitude = uint64(value)
    else:
        magnitude = uint64(0) - uint64(value)
    if magnitude == 0:
        return uint8(0)
    exponent = 0
    while (uint64(1) << uint64(exponent)) < magnitude and exponent < 63:
        exponent += 1
    if (uint64(1) << uint64(exponent)) < magnitude:
        exponent = 64
    return uint8(127 + exponent)


@cuda.jit(device=True)
def fp8_to_float32(bits, interpretation):
    """The value of E4M3 or E5M2 bits, exactly."""
    bits = uint8(bits)
    negative = (bits & uint8(0x80)) != 0
    if interpretation == fp8_interpretation_t.E4M3:
        bias = 7
        significand_bits = 3
        if (bits & uint8(0x7F)) == 0x7F:
            return float32(math.nan)
    else:
        bias = 15
        significand_bits = 2
        if (bits & uint8(0x7C)) == 0x7C:
            if (bits & uint8(0x03)) != 0:
                return float32(math.nan)
            return float32(-math.inf) if negative else float32(math.inf)
    exponent_field = int64((bits & uint8(0x7F)) >> uint8(significand_bits))
    fraction = float64(bits & uint8((1 << significand_bits) - 1))
    if exponent_field == 0:
        value = fraction * power_of_two(1 - bias - significand_bits)
    else:
        value = (fraction + float64(1 << significand_bits)) * power_of_two(
            exponent_field - bias - significand_bits
        )
    return float32(-value if negative else value)


@cuda.jit(device=True)
def e8m0_to_float32(bits):
    return bfloat16_bits_to_float32(cvt_e8m0_to_bf16raw(bits).x)


@cuda.jit(device=True)
def fp8_is_nonzero(bits):
    return (uint8(bits) & uint8(0x7F)) != 0


@cuda.jit(device=True)
def to_signed(value, low, high):
    """A float truncated toward zero and saturated to [low, high]; NaN is 0."""
    value = float64(value)
    if value != value:
        return int64(0)
    if value <= float64(low):
        return int64(low)
    if value >= float64(high):
        return int64(high)
    return int64(value)


@cuda.jit(device=True)
def to_unsigned(value, high):
    """A float truncated toward zero and saturated to [0, high]; NaN is 0."""
    value = float64(value)
    if value != value or value <= 0.0:
        return uint64(0)
    if value >= float64(high):
        return uint64(high)
    return uint64(value)
