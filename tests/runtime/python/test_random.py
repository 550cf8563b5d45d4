"""kiln.cuda.random: xoroshiro128+ states bit-identical to Numba's
`create_xoroshiro128p_states`, checked against Numba's own CPU
initialization (numba.cuda.random.init_xoroshiro128p_states_cpu) where Numba
is installed, and against a direct transcription of its algorithm always."""

import time

import numpy as np
import pytest

import kiln.cuda as cuda
from kiln.cuda.random import create_xoroshiro128p_states, init_xoroshiro128p_states, xoroshiro128p_dtype

MASK = (1 << 64) - 1


def _reference(n, seed, subsequence_start):
    """Numba's algorithm, step by step, in Python ints (small n only)."""

    def next_state(s0, s1):
        s1 ^= s0
        return (((s0 << 55) | (s0 >> 9)) & MASK) ^ s1 ^ ((s1 << 14) & MASK), ((s1 << 36) | (s1 >> 28)) & MASK

    def jump(s0, s1):
        a0 = a1 = 0
        for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
            for bit in range(64):
                if word >> bit & 1:
                    a0 ^= s0
                    a1 ^= s1
                s0, s1 = next_state(s0, s1)
        return a0, a1

    z = ((seed & MASK) + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    state = (z, z)
    for _ in range(subsequence_start):
        state = jump(*state)
    states = []
    for i in range(n):
        if i:
            state = jump(*state)
        states.append(state)
    return states


def test_dtype():
    assert xoroshiro128p_dtype == np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
    assert xoroshiro128p_dtype.itemsize == 16


@pytest.mark.parametrize("n, seed, start", [(1, 1, 0), (5, 1, 0), (17, 42, 0), (9, 0, 3), (4, 2**64 - 1, 1),
                                            (3, -7, 0), (6, 123456789, 2)])
def test_matches_reference_algorithm(n, seed, start):
    states = create_xoroshiro128p_states(n, seed=seed, subsequence_start=start)
    assert isinstance(states, cuda.DeviceNDArray)
    assert states.shape == (n,) and states.dtype == xoroshiro128p_dtype
    host = states.copy_to_host()
    assert [(int(a), int(b)) for a, b in zip(host["s0"], host["s1"])] == _reference(n, seed, start)


@pytest.mark.parametrize(
    "n, seed, start",
    [(1, 1, 0), (1536, 1, 0), (1000, 42, 0), (257, 7, 5), (64, 2**63 + 11, 0), (3000, 987654321, 1),
     (2, 0, 40)],
)
def test_bit_identical_to_numba(n, seed, start):
    numba_random = pytest.importorskip("numba.cuda.random")
    expected = np.empty(n, dtype=numba_random.xoroshiro128p_dtype)
    numba_random.init_xoroshiro128p_states_cpu(expected, np.uint64(seed), start)
    got = create_xoroshiro128p_states(n, seed=seed, subsequence_start=start).copy_to_host()
    np.testing.assert_array_equal(got["s0"], expected["s0"])
    np.testing.assert_array_equal(got["s1"], expected["s1"])


def test_large_n_is_fast_and_consistent():
    begin = time.perf_counter()
    states = create_xoroshiro128p_states(1_000_000, seed=3).copy_to_host()
    assert time.perf_counter() - begin < 10
    # State i + 1 is state i jumped once: the last states agree with a run
    # that starts at subsequence 999_998.
    tail = create_xoroshiro128p_states(2, seed=3, subsequence_start=999_998).copy_to_host()
    np.testing.assert_array_equal(tail, states[-2:])


def test_huge_subsequence_start():
    # Numba would loop 2**60 times; Kiln uses powers of the jump matrix.
    first = create_xoroshiro128p_states(3, seed=5, subsequence_start=2**60).copy_to_host()
    second = create_xoroshiro128p_states(2, seed=5, subsequence_start=2**60 + 1).copy_to_host()
    np.testing.assert_array_equal(first[1:], second)


def test_empty_and_stream():
    assert create_xoroshiro128p_states(0, seed=1).shape == (0,)
    s = cuda.stream()
    states = create_xoroshiro128p_states(10, seed=1, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(states.copy_to_host(), create_xoroshiro128p_states(10, seed=1).copy_to_host())


def test_init_into_existing_array():
    states = cuda.device_array(8, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states(states, 99)
    np.testing.assert_array_equal(states.copy_to_host(), create_xoroshiro128p_states(8, 99).copy_to_host())


def test_seed_program_usage():
    nthreads, nblocks = 64, 24
    rng_states = create_xoroshiro128p_states(nblocks * nthreads, seed=1)
    assert rng_states.shape == (1536,)
    assert cuda.random.create_xoroshiro128p_states is create_xoroshiro128p_states
