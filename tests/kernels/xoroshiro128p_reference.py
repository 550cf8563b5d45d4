"""A NumPy transcription of numba-cuda's random.py (xoroshiro128+ by Blackman
and Vigna, seeded with SplitMix64, 2**64-step jumps between the states of
consecutive threads, and the conversions to float32/float64), vectorized over
states: the reference for Kiln's numba.cuda.random (test_xoroshiro128p.py
checks it against numba-cuda's own host implementation). NumPy only, so that
tests that run without the compiler can use it."""

import math

import numpy as np

STATE_DTYPE = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

U64 = np.uint64
TWO_PI_FLOAT32 = np.float32(2 * math.pi)
TWO_PI_FLOAT64 = np.float64(2 * math.pi)
JUMP = (U64(0xBEAC0467EBA5FACB), U64(0xD86B048B86AA9922))


def splitmix64(seed):
    mask = 2**64 - 1
    z = (int(seed) + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return U64(z ^ (z >> 31))


def rotl(x, k):
    return (x << U64(k)) | (x >> U64(64 - k))


def next_raw(states):
    """xoroshiro128p_next on every state at once; returns the outputs."""
    s0 = states["s0"].copy()
    s1 = states["s1"].copy()
    result = s0 + s1
    s1 ^= s0
    states["s0"] = rotl(s0, 55) ^ s1 ^ (s1 << U64(14))
    states["s1"] = rotl(s1, 36)
    return result


def jump(states):
    s0 = np.zeros(states.shape, dtype=np.uint64)
    s1 = np.zeros(states.shape, dtype=np.uint64)
    for word in JUMP:
        for bit in range(64):
            if int(word) >> bit & 1:
                s0 ^= states["s0"]
                s1 ^= states["s1"]
            next_raw(states)
    states["s0"] = s0
    states["s1"] = s1


def init_states(n, seed, subsequence_start=0):
    """init_xoroshiro128p_states_cpu: state i is state i - 1 jumped once."""
    states = np.zeros(n, dtype=STATE_DTYPE)
    if n == 0:
        return states
    first = np.zeros(1, dtype=STATE_DTYPE)
    first["s0"] = first["s1"] = splitmix64(seed)
    for _ in range(subsequence_start):
        jump(first)
    states[0] = first[0]
    for i in range(1, n):
        current = states[i - 1: i].copy()
        jump(current)
        states[i] = current[0]
    return states


def unit_float64(raw):
    return (raw >> U64(11)).astype(np.float64) * (1.0 / 2.0**53)


def uniform_float32(states):
    return unit_float64(next_raw(states)).astype(np.float32)


def uniform_float64(states):
    return unit_float64(next_raw(states))


def normal_float32(states):
    u1 = uniform_float32(states)
    u2 = uniform_float32(states)
    with np.errstate(divide="ignore"):
        return np.sqrt(-np.float32(2.0) * np.log(u1)) * np.cos(TWO_PI_FLOAT32 * u2)


def normal_float64(states):
    # As numba-cuda: float32 uniforms, and math.log of the float32 u1.
    u1 = uniform_float32(states)
    u2 = uniform_float32(states)
    with np.errstate(divide="ignore"):
        return np.sqrt(-np.float64(2.0) * np.log(u1).astype(np.float64)) * np.cos(TWO_PI_FLOAT64 * u2)
