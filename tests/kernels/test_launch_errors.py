"""Launches the CPU engine must refuse or stop, with messages that say what
went wrong: configurations a GPU rejects (empty or oversized blocks and
grids, too much shared memory), and blocks whose threads wait for each
other forever (deadlocks), which must be reported rather than hang.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda, float32, int32, void

FULL = 0xffffffff


@cuda.jit(void(int32[::1]))
def simple(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i


@cuda.jit(void(float32[::1]))
def with_dynamic_shared(out):
    dyn = cuda.shared.array(0, float32)
    dyn[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    out[cuda.threadIdx.x] = dyn[0]


@cuda.jit(void(float32[::1]))
def with_static_shared(out):
    big = cuda.shared.array(10000, float32)  # 40000 bytes
    big[cuda.threadIdx.x] = 2.0
    cuda.syncthreads()
    out[cuda.threadIdx.x] = big[0]
'''

# Kernels that never finish, run in a child process so that a hang fails
# the test (by timeout) instead of stopping the suite.
DEADLOCKS = '''
from numba import cuda, int32, void

FULL = 0xffffffff


@cuda.jit(void(int32[::1]))
def barrier_against_syncwarp(out):
    """Lanes 0-15 of the second warp wait at the block barrier; lanes 16-31
    wait in syncwarp for lanes 0-15, which never leave the barrier."""
    tid = cuda.threadIdx.x
    if tid < 48:
        cuda.syncthreads()
    else:
        cuda.syncwarp(FULL)
        cuda.syncthreads()
    out[tid] = 1


@cuda.jit(void(int32[::1]))
def mismatched_collectives(out):
    """Half a warp shuffles while the other half votes, both naming the
    whole warp."""
    tid = cuda.threadIdx.x
    if cuda.laneid < 16:
        out[tid] = cuda.shfl_sync(FULL, tid, 0)
    else:
        out[tid] = cuda.ballot_sync(FULL, 1)


@cuda.jit(void(int32[::1]))
def deadlock_in_one_block(out):
    """Only block 2 deadlocks: its thread 0 waits at a barrier while the
    rest of its warp waits in a shuffle that names thread 0."""
    tid = cuda.threadIdx.x
    if cuda.blockIdx.x == 2:
        if tid == 0:
            cuda.syncthreads()
        else:
            out[tid] = cuda.shfl_sync(FULL, tid, 0)
    out[cuda.grid(1)] = 1
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("launch_errors"))


@pytest.mark.parametrize(
    "grid, block, expected",
    [
        (1, 0, "blockdim 0 has a dimension below 1"),
        (1, (32, 0, 1), "blockdim (32, 0, 1) has a dimension below 1"),
        (0, 32, "griddim 0 has a dimension below 1"),
        (1, (1, 1, 0), "blockdim (1, 1, 0) has a dimension below 1"),
        ((4, 0), 32, "griddim (4, 0) has a dimension below 1"),
        (1, 1025, "blockdim 1025 exceeds the limit 1024 of dimension x"),
        (1, (32, 33, 1), "has 1056 threads, more than the 1024 a block can hold"),
        (1, (1, 1, 65), "exceeds the limit 64 of dimension z"),
        (1, (1, 1025, 1), "exceeds the limit 1024 of dimension y"),
        ((1, 65536), 1, "griddim (1, 65536) exceeds the limit 65535 of dimension y"),
        ((1, 1, 65536), 1, "griddim (1, 1, 65536) exceeds the limit 65535 of dimension z"),
        (2**31, 1, "griddim 2147483648 exceeds the limit 2147483647 of dimension x"),
        (2**63, 1, "griddim 9223372036854775808 exceeds the limit 2147483647 of dimension x"),
        (2**64, 1, "griddim 18446744073709551616 exceeds the limit 2147483647 of dimension x"),
        (1, 2**64, "blockdim 18446744073709551616 exceeds the limit 1024 of dimension x"),
        ((1, 2**70), 1, "exceeds the limit 65535 of dimension y"),
        (1, (1, 1, 2**100), "exceeds the limit 64 of dimension z"),
        (-(2**64), 1, "has a dimension below 1"),
    ],
)
def test_bad_configuration(m, grid, block, expected):
    out = np.zeros(4, dtype=np.int32)
    with pytest.raises(ValueError) as error:
        m.simple[grid, block](out)
    message = str(error.value)
    assert expected in message and "simple" in message, (
        f"launch with grid {grid}, block {block}: the message must name the kernel and say "
        f"'{expected}', got: {message}"
    )
    assert (out == 0).all(), "a rejected launch must not run"


def test_largest_valid_configurations_run(m):
    out = np.zeros(1024, dtype=np.int32)
    m.simple[1, 1024](out)
    np.testing.assert_array_equal(out, np.arange(1024))
    out = np.zeros(64, dtype=np.int32)
    m.simple[1, (1, 1, 64)](out)
    assert out[0] == 0 and (out[1:] == 0).all()
    m.simple[(1, 65535), 1](out)


def test_too_much_dynamic_shared_memory(m):
    out = np.zeros(32, dtype=np.float32)
    with pytest.raises(ValueError) as error:
        m.with_dynamic_shared[1, 32, 0, 48 * 1024 + 1](out)
    message = str(error.value)
    assert "sharedmem 49153" in message and "49152 bytes" in message, (
        f"the message must give the requested and the allowed bytes: {message}"
    )
    m.with_dynamic_shared[1, 32, 0, 48 * 1024](out)
    assert (out == 1.0).all(), "48 KiB of dynamic shared memory is allowed"


def test_static_plus_dynamic_shared_memory_over_the_limit(m):
    out = np.zeros(32, dtype=np.float32)
    m.with_static_shared[1, 32, 0, 9152](out)
    assert (out == 2.0).all()
    with pytest.raises(ValueError) as error:
        m.with_static_shared[1, 32, 0, 9153](out)
    message = str(error.value)
    assert "9153 bytes of dynamic shared memory plus its 40000 static bytes" in message, (
        f"static and dynamic shared memory together over 48 KiB: {message}"
    )


def run_child(tmp_path, body, timeout=60):
    """Runs `body` in a fresh interpreter that has compiled DEADLOCKS as `m`."""
    (tmp_path / "deadlocks.py").write_text(DEADLOCKS)
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import numpy as np
        import kiln_cpu
        m = kiln_cpu.compile_module({str(tmp_path / "deadlocks.py")!r})
        """
    ) + textwrap.dedent(body)
    try:
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                timeout=timeout, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        pytest.fail(f"the launch hung for {timeout} s instead of reporting a deadlock")
    assert result.returncode == 0, f"child failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_deadlocks_are_reported(tmp_path):
    output = run_child(
        tmp_path,
        """
        for name, grid in [("barrier_against_syncwarp", 1), ("mismatched_collectives", 1),
                           ("deadlock_in_one_block", 4)]:
            out = np.zeros(4 * 64, dtype=np.int32)
            try:
                getattr(m, name)[grid, 64](out)
                print(name, "| no error")
            except RuntimeError as error:
                print(name, "|", error)
        # The engine still works after abandoning deadlocked blocks.
        out = np.zeros(64, dtype=np.int32)
        try:
            m.mismatched_collectives[1, 64](out)
        except RuntimeError:
            pass
        out = np.zeros(2 * 64, dtype=np.int32)
        m.deadlock_in_one_block[2, 64](out)
        print("after |", int(out.sum()))
        """,
    )
    reports = dict(line.split(" | ", 1) for line in output.splitlines())
    assert reports["after"] == "128", (
        f"blocks that do not deadlock must run after deadlocked launches: {reports['after']}"
    )
    for name in ["barrier_against_syncwarp", "mismatched_collectives", "deadlock_in_one_block"]:
        message = reports[name]
        assert "deadlock" in message and name in message, (
            f"{name}: expected a deadlock report naming the kernel, got: {message}"
        )
    assert "block (2, 0, 0)" in reports["deadlock_in_one_block"], (
        f"the report must name the deadlocked block: {reports['deadlock_in_one_block']}"
    )
    assert "syncwarp" in reports["barrier_against_syncwarp"] and "syncthreads" in reports[
        "barrier_against_syncwarp"], (
        f"the report must say where threads wait: {reports['barrier_against_syncwarp']}"
    )
    assert "shfl_sync" in reports["mismatched_collectives"] and "ballot_sync" in reports[
        "mismatched_collectives"], (
        f"the report must name both collectives: {reports['mismatched_collectives']}"
    )
