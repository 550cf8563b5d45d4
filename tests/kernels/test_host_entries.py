"""The entries a kernel's host code gives the CPU engine, and that a kernel
runs through the one the engine picks: every kernel has a thread entry
(the plain thread, which the engine's reference mode runs); threads that
never wait for one another, or wait only at block barriers (barrier
regions), have a block entry too, also with local arrays (which run as
fibers when a block's arrays would not fit a worker's stack); threads that
wait at warp collectives have the thread entry alone.
"""

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda, float64, void


@cuda.jit(void(float64[::1], float64[::1]))
def independent(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2.0 * x[i] + 1.0


@cuda.jit(void(float64[::1], float64[::1]))
def with_local_array(x, out):
    i = cuda.grid(1)
    window = cuda.local.array(4, float64)
    for k in range(4):
        window[k] = x[i] * k if i < x.size else 0.0
    if i < x.size:
        out[i] = window[0] + window[1] + window[2] + window[3]


@cuda.jit(void(float64[::1], float64[::1]))
def waits_for_the_block(x, out):
    shared = cuda.shared.array(64, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    shared[t] = x[i]
    cuda.syncthreads()
    out[i] = shared[63 - t]


@cuda.jit(void(float64[::1], float64[::1]))
def waits_for_the_warp(x, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 1)
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    path = tmp_path_factory.mktemp("host_entries") / "host_entries_kernels.py"
    path.write_text(SOURCE)
    return kiln_cpu.compile_module(path)


def has_block_entry(kernel):
    [info] = kernel.info()
    return info["block_entry"]


def test_independent_threads_have_a_block_entry(m):
    assert has_block_entry(m.independent)
    x = np.arange(1000, dtype=np.float64)
    out = np.zeros_like(x)
    m.independent[4, 256](x, out)
    np.testing.assert_array_equal(out, 2.0 * x + 1.0)


def test_local_arrays_keep_the_block_entry(m):
    assert has_block_entry(m.with_local_array)
    x = np.arange(1000, dtype=np.float64)
    out = np.zeros_like(x)
    m.with_local_array[4, 256](x, out)
    np.testing.assert_array_equal(out, 6.0 * x)


def test_threads_that_wait_at_block_barriers_have_a_block_entry(m):
    assert has_block_entry(m.waits_for_the_block)
    x = np.arange(256, dtype=np.float64)
    out = np.zeros_like(x)
    m.waits_for_the_block[4, 64](x, out)
    np.testing.assert_array_equal(out, x.reshape(4, 64)[:, ::-1].ravel())


def test_threads_that_wait_at_warp_collectives_have_the_thread_entry_alone(m):
    assert not has_block_entry(m.waits_for_the_warp)
    x = np.arange(64, dtype=np.float64)
    out = np.zeros_like(x)
    m.waits_for_the_warp[1, 64](x, out)
    expected = np.concatenate([x[1:32], x[31:32], x[33:64], x[63:64]])
    np.testing.assert_array_equal(out, expected)
