"""Kiln's numba.cuda.random: the xoroshiro128+ generator for kernels.

Compiled by Kiln like any kernel module and linked into modules that import
from numba.cuda.random. It reproduces Numba's generator bit for bit: the same
state layout (one record of two uint64 words per thread), the same SplitMix64
seeding, the same step and jump functions of xoroshiro128+ (Blackman and
Vigna), and the same conversions to floating point, including the Box-Muller
normal variates built from single-precision uniforms.
"""

import math

import numpy as np
from numba import cuda, float32, float64, int64, uint32, uint64

TWO_PI_FLOAT32 = np.float32(2 * math.pi)
TWO_PI_FLOAT64 = np.float64(2 * math.pi)


@cuda.jit(device=True)
def init_xoroshiro128p_state(states, index, seed):
    """Seed one state with SplitMix64 of `seed`, so small seeds mix well."""
    index = int64(index)
    z = uint64(seed) + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint32(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint32(27))) * uint64(0x94D049BB133111EB)
    z = z ^ (z >> uint32(31))
    states[index]["s0"] = z
    states[index]["s1"] = z


@cuda.jit(device=True)
def rotl(x, k):
    """Rotate the 64-bit word `x` left by `k` bits."""
    x = uint64(x)
    k = uint32(k)
    return (x << k) | (x >> uint32(64 - k))


@cuda.jit(device=True)
def xoroshiro128p_next(states, index):
    """Advance states[index] one step and return the next 64-bit output."""
    index = int64(index)
    first = states[index]["s0"]
    second = states[index]["s1"]
    output = first + second
    second ^= first
    states[index]["s0"] = uint64(rotl(first, uint32(55))) ^ second ^ (second << uint32(14))
    states[index]["s1"] = uint64(rotl(second, uint32(36)))
    return output


@cuda.jit(device=True)
def xoroshiro128p_jump(states, index):
    """Advance states[index] by 2**64 steps, to start an independent stream."""
    index = int64(index)
    polynomial = (uint64(0xBEAC0467EBA5FACB), uint64(0xD86B048B86AA9922))
    first = uint64(0)
    second = uint64(0)
    for word in range(2):
        for bit in range(64):
            if polynomial[word] & (uint64(1) << uint32(bit)):
                first ^= states[index]["s0"]
                second ^= states[index]["s1"]
            xoroshiro128p_next(states, index)
    states[index]["s0"] = first
    states[index]["s1"] = second


@cuda.jit(device=True)
def uint64_to_unit_float64(x):
    """The top 53 bits of `x` as a float64 in [0, 1)."""
    x = uint64(x)
    return (x >> uint32(11)) * (float64(1) / (uint64(1) << uint32(53)))


@cuda.jit(device=True)
def uint64_to_unit_float32(x):
    """As uint64_to_unit_float64, rounded to float32."""
    x = uint64(x)
    return float32(uint64_to_unit_float64(x))


@cuda.jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 drawn uniformly from [0, 1) with states[index]."""
    index = int64(index)
    return uint64_to_unit_float32(xoroshiro128p_next(states, index))


@cuda.jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 drawn uniformly from [0, 1) with states[index]."""
    index = int64(index)
    return uint64_to_unit_float64(xoroshiro128p_next(states, index))


@cuda.jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A standard normal float32 (Box-Muller); uses two steps of the state."""
    index = int64(index)
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-float32(2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT32 * u2)


@cuda.jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A standard normal float64. Like Numba, it draws float32 uniforms."""
    index = int64(index)
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-float64(2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT64 * u2)
