"""Host side of `numba.cuda.random`: xoroshiro128+ generator states.

`create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0)` gives
the same states as Numba's: state 0 is SplitMix64(seed) in both words,
advanced by `subsequence_start` jumps of 2**64 steps; state i is state i-1
advanced by one jump. Numba computes this sequentially (n * 128 generator
steps in its jitted CPU code); here the jump is a linear map over GF(2)^128,
so it is applied as a matrix: J^(2^k) is precomputed by squaring, and
states [m, 2m) are J^m applied to states [0, m) with NumPy, byte-table at a
time.

The device functions (`xoroshiro128p_uniform_float32`, ...) are compiled
into kernels by Kiln's compiler; here they are the kernel language's
stand-ins, so that kernels (closures among them) name them as host code
imported them, and calling one on the host says it runs only in kernels.
"""

import numpy as np

from .devicearray import device_array
from .streams import stream_handle

from .kernel_language import device_function

__all__ = [
    "xoroshiro128p_dtype",
    "create_xoroshiro128p_states",
    "init_xoroshiro128p_states",
    "init_xoroshiro128p_states_cpu",
    "TWO_PI_FLOAT32",
    "TWO_PI_FLOAT64",
    *(DEVICE_FUNCTIONS := (
        "init_xoroshiro128p_state", "rotl", "uint64_to_unit_float32", "uint64_to_unit_float64",
        "xoroshiro128p_jump", "xoroshiro128p_next", "xoroshiro128p_normal_float32",
        "xoroshiro128p_normal_float64", "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64")),
]

TWO_PI_FLOAT32 = np.float32(2 * np.pi)
TWO_PI_FLOAT64 = np.float64(2 * np.pi)
globals().update({name: device_function(f"random.{name}") for name in DEVICE_FUNCTIONS})

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

_MASK64 = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


def _splitmix64(seed):
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _next(s0, s1):
    s1 ^= s0
    rotated0 = ((s0 << 55) | (s0 >> 9)) & _MASK64
    return rotated0 ^ s1 ^ ((s1 << 14) & _MASK64), ((s1 << 36) | (s1 >> 28)) & _MASK64


def _jump_scalar(state):
    """Numba's xoroshiro128p_jump on a 128-bit int (s0 | s1 << 64)."""
    s0, s1 = state & _MASK64, state >> 64
    a0 = a1 = 0
    for word in _JUMP:
        for bit in range(64):
            if word >> bit & 1:
                a0 ^= s0
                a1 ^= s1
            s0, s1 = _next(s0, s1)
    return a0 | (a1 << 64)


def _apply(columns, vector):
    result = 0
    bit = 0
    while vector:
        if vector & 1:
            result ^= columns[bit]
        vector >>= 1
        bit += 1
    return result


class _Power:
    """J^(2^k): its columns and its byte tables for vectorized application."""

    def __init__(self, columns):
        self.columns = columns
        self._tables = None

    def squared(self):
        return _Power([_apply(self.columns, c) for c in self.columns])

    def apply_scalar(self, vector):
        return _apply(self.columns, vector)

    def tables(self):
        # tables[b][v] = image of byte value v at byte position b (0..15).
        if self._tables is None:
            low = np.zeros((16, 256), dtype=np.uint64)
            high = np.zeros((16, 256), dtype=np.uint64)
            for position in range(16):
                entries = [0] * 256
                for value in range(1, 256):
                    lowest = (value & -value).bit_length() - 1
                    entries[value] = entries[value & (value - 1)] ^ self.columns[position * 8 + lowest]
                low[position] = [e & _MASK64 for e in entries]
                high[position] = [e >> 64 for e in entries]
            self._tables = (low, high)
        return self._tables

    def apply(self, s0, s1):
        low, high = self.tables()
        out0 = np.zeros_like(s0)
        out1 = np.zeros_like(s1)
        for word, base in ((s0, 0), (s1, 8)):
            for byte in range(8):
                index = ((word >> np.uint64(8 * byte)) & np.uint64(0xFF)).astype(np.intp)
                out0 ^= low[base + byte][index]
                out1 ^= high[base + byte][index]
        return out0, out1


_POWERS = []


def _power(k):
    """J^(2^k)."""
    if not _POWERS:
        _POWERS.append(_Power([_jump_scalar(1 << i) for i in range(128)]))
    while len(_POWERS) <= k:
        _POWERS.append(_POWERS[-1].squared())
    return _POWERS[k]


def _to_uint64(value):
    return int(value) & _MASK64


def _states(n, seed, subsequence_start):
    states = np.empty(n, dtype=xoroshiro128p_dtype)
    if n < 1:
        return states
    z = _splitmix64(_to_uint64(seed))
    state = z | (z << 64)
    jumps = _to_uint64(subsequence_start)
    k = 0
    while jumps:
        if jumps & 1:
            state = _power(k).apply_scalar(state)
        jumps >>= 1
        k += 1
    s0 = np.empty(n, dtype=np.uint64)
    s1 = np.empty(n, dtype=np.uint64)
    s0[0] = state & _MASK64
    s1[0] = state >> 64
    filled, k = 1, 0
    while filled < n:
        count = min(filled, n - filled)
        s0[filled : filled + count], s1[filled : filled + count] = _power(k).apply(s0[:count], s1[:count])
        filled += count
        k += 1
    states["s0"] = s0
    states["s1"] = s1
    return states


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Fill the device array `states` as `create_xoroshiro128p_states` would."""
    host = _states(states.shape[0], seed, subsequence_start)
    states.copy_to_device(host, stream=stream)
    handle = stream_handle(stream) or getattr(states, "stream_handle", 0)
    if handle:
        # `host` must outlive an asynchronous copy.
        from kiln import _runtime

        _runtime.Stream.wrap(handle).synchronize()


def init_xoroshiro128p_states_cpu(states, seed, subsequence_start):
    """Fill the host array `states` (of xoroshiro128p_dtype) as
    `create_xoroshiro128p_states` would."""
    host = _states(states.shape[0], seed, subsequence_start)
    states["s0"] = host["s0"]
    states["s1"] = host["s1"]


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new device array of `n` xoroshiro128+ states, bit-identical to Numba's.

    Consecutive states are 2**64 steps apart in the generator's sequence;
    `subsequence_start` advances the first one by that many jumps.
    """
    handle = stream_handle(stream)
    states = device_array(n, dtype=xoroshiro128p_dtype, stream=handle)
    init_xoroshiro128p_states(states, seed, subsequence_start, handle)
    return states
