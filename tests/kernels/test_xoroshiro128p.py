"""numba.cuda.random on the CPU engine, bit for bit against Numba's algorithm.

The reference is a NumPy transcription of numba-cuda's random.py
(xoroshiro128+ by Blackman and Vigna, seeded with SplitMix64, 2**64-step
jumps between the states of consecutive threads, and the conversions to
float32/float64). Kernels seed states, draw raw 64-bit outputs and uniform
floats, which must match exactly for the same seed and thread index;
normal variates go through logf/cosf/sqrtf (or their float64 versions)
and must match within those functions' CUDA ulp bounds. The transcription
itself is cross-checked against numba-cuda's own host implementation
(numba-cuda from requirements-dev.txt), run in a subprocess.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln_cpu
from xoroshiro128p_reference import (STATE_DTYPE, init_states, jump, next_raw, normal_float32,
                                     normal_float64, splitmix64, uniform_float32, uniform_float64)

# --- Kernels -------------------------------------------------------------------

SOURCE = """
from numba import cuda, float32, float64, int64, uint64
from numba.cuda.random import (
    init_xoroshiro128p_state,
    xoroshiro128p_jump,
    xoroshiro128p_next,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_type,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)


@cuda.jit((xoroshiro128p_type[::1], uint64))
def seed(states, value):
    i = cuda.grid(1)
    if i < states.size:
        init_xoroshiro128p_state(states, i, value + uint64(i))


@cuda.jit((xoroshiro128p_type[::1],))
def jump_all(states):
    i = cuda.grid(1)
    if i < states.size:
        xoroshiro128p_jump(states, i)


@cuda.jit((xoroshiro128p_type[::1], uint64[:, ::1]))
def raw(states, out):
    i = cuda.grid(1)
    if i < states.size:
        for k in range(out.shape[1]):
            out[i, k] = xoroshiro128p_next(states, i)


@cuda.jit((xoroshiro128p_type[::1], float32[:, ::1], float64[:, ::1]))
def uniforms(states, single, double):
    i = cuda.grid(1)
    if i < states.size:
        for k in range(single.shape[1]):
            single[i, k] = xoroshiro128p_uniform_float32(states, i)
            double[i, k] = xoroshiro128p_uniform_float64(states, i)


@cuda.jit((xoroshiro128p_type[::1], float32[:, ::1], float64[:, ::1]))
def normals(states, single, double):
    i = cuda.grid(1)
    if i < states.size:
        for k in range(single.shape[1]):
            single[i, k] = xoroshiro128p_normal_float32(states, i)
            double[i, k] = xoroshiro128p_normal_float64(states, i)
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("random"))


THREADS = 40
DRAWS = 50


def launch(kernel, *arguments):
    kernel[2, 32](*arguments)


@pytest.mark.parametrize("seed_value", [0, 1, 42, 2**63 + 12345, 2**64 - 1])
def test_seeding(kernels, seed_value):
    states = np.zeros(THREADS, dtype=STATE_DTYPE)
    launch(kernels.seed, states, np.uint64(seed_value))
    expected = [int(splitmix64((seed_value + i) % 2**64)) for i in range(THREADS)]
    assert states["s0"].tolist() == expected, f"init_xoroshiro128p_state(states, i, {seed_value} + i): s0"
    assert states["s1"].tolist() == expected, f"init_xoroshiro128p_state(states, i, {seed_value} + i): s1"


def test_jump(kernels):
    states = init_states(THREADS, 7)
    expected = states.copy()
    launch(kernels.jump_all, states)
    jump(expected)
    assert states.tolist() == expected.tolist(), "xoroshiro128p_jump: each state advanced by 2**64 steps"


@pytest.mark.parametrize("seed_value", [1, 12345])
def test_raw_outputs(kernels, seed_value):
    states = init_states(THREADS, seed_value)
    reference = states.copy()
    out = np.zeros((THREADS, DRAWS), dtype=np.uint64)
    launch(kernels.raw, states, out)
    expected = np.stack([next_raw(reference) for _ in range(DRAWS)], axis=1)
    wrong = np.argwhere(out != expected)
    assert wrong.size == 0, (
        f"xoroshiro128p_next (seed {seed_value}) differs first at (thread, draw) {tuple(wrong[0])}: "
        f"got {out[tuple(wrong[0])]}, expected {expected[tuple(wrong[0])]}")
    assert states.tolist() == reference.tolist(), "states after the draws"


def test_uniforms_are_bit_exact(kernels):
    states = init_states(THREADS, 2024)
    reference = states.copy()
    single = np.zeros((THREADS, DRAWS), dtype=np.float32)
    double = np.zeros((THREADS, DRAWS))
    launch(kernels.uniforms, states, single, double)
    expected_single = np.zeros_like(single)
    expected_double = np.zeros_like(double)
    for k in range(DRAWS):
        expected_single[:, k] = uniform_float32(reference)
        expected_double[:, k] = uniform_float64(reference)
    np.testing.assert_array_equal(single.view(np.uint32), expected_single.view(np.uint32),
                                  err_msg="xoroshiro128p_uniform_float32, bit for bit")
    np.testing.assert_array_equal(double.view(np.uint64), expected_double.view(np.uint64),
                                  err_msg="xoroshiro128p_uniform_float64, bit for bit")
    assert ((single >= 0) & (single <= 1)).all() and ((double >= 0) & (double < 1)).all()


def test_normals(kernels):
    states = init_states(THREADS, 99)
    reference = states.copy()
    single = np.zeros((THREADS, DRAWS), dtype=np.float32)
    double = np.zeros((THREADS, DRAWS))
    launch(kernels.normals, states, single, double)
    expected_single = np.zeros_like(single)
    expected_double = np.zeros_like(double)
    for k in range(DRAWS):
        expected_single[:, k] = normal_float32(reference)
        expected_double[:, k] = normal_float64(reference)
    # sqrt(-2 log u1) cos(2 pi u2), with the same float32 uniforms and
    # arguments: what differs is logf (CUDA: 1 ulp), cosf (2 ulp) and the
    # reference's own float32 log and cos (NumPy's, within 1 ulp each), so a
    # few float32 ulps relative, or absolute near the zeros of cos. The
    # float64 variant inherits the float32 log(u1).
    bound = 8 * float(np.finfo(np.float32).eps)
    np.testing.assert_allclose(single, expected_single, rtol=bound, atol=bound,
                               err_msg="xoroshiro128p_normal_float32")
    np.testing.assert_allclose(double, expected_double, rtol=bound, atol=bound,
                               err_msg="xoroshiro128p_normal_float64")
    assert states.tolist() == reference.tolist(), "normals advance the state by two steps each"


CROSS_CHECK = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from numba.cuda import random as r

    states = np.empty(6, dtype=r.xoroshiro128p_dtype)
    r.init_xoroshiro128p_states_cpu(states, 2024, 1)
    initial = [[int(s["s0"]), int(s["s1"])] for s in states]
    raw = [str(r.xoroshiro128p_next(states, i)) for i in range(6)]
    single = [float(r.xoroshiro128p_uniform_float32(states, i)) for i in range(6)]
    double = [float(r.xoroshiro128p_uniform_float64(states, i)) for i in range(6)]
    json.dump({"initial": initial, "raw": raw, "single": single, "double": double}, sys.stdout)
    """
)


def test_transcription_matches_numba_cuda():
    environment = dict(os.environ, NUMBA_DISABLE_CUDA="1")
    result = subprocess.run([sys.executable, "-c", CROSS_CHECK], capture_output=True, text=True,
                            timeout=300, env=environment)
    assert result.returncode == 0, result.stderr
    numba = json.loads(result.stdout)
    states = init_states(6, 2024, subsequence_start=1)
    assert [[int(s["s0"]), int(s["s1"])] for s in states] == numba["initial"], "init_xoroshiro128p_states_cpu"
    assert [str(v) for v in next_raw(states)] == numba["raw"], "xoroshiro128p_next"
    assert uniform_float32(states).tolist() == numba["single"], "xoroshiro128p_uniform_float32"
    assert uniform_float64(states).tolist() == numba["double"], "xoroshiro128p_uniform_float64"
