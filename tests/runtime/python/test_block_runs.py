"""Kernels whose blocks are independent (no barriers, atomics or prints, no
shared memory) take runs of blocks: the consecutive blocks of a grid row run
row of threads by row of threads, each row across every block of the run.
Nothing a race-free kernel computes changes: each block's threads still run
in their order, and an index error still ends its block at the failing
thread while every other block finishes, as when blocks run one at a time.

Each kernel has a twin that touches shared memory, which makes the engine
run its blocks one at a time without changing what it computes.
"""

import re

import numpy as np
import pytest

KERNELS = '''
from kiln import cuda
from numba import int32


@cuda.jit
def record_order(order, counter):
    # A race on purpose: the order in which the threads run.
    x, y = cuda.grid(2)
    order[y, x] = counter[0]
    counter[0] += 1
    ONE_BLOCK_AT_A_TIME


@cuda.jit
def global_index_only(out, fail, probe):
    x, y = cuda.grid(2)
    out[y, x] = x * 1000 + y + probe[fail[y, x]]
    ONE_BLOCK_AT_A_TIME


@cuda.jit
def block_and_thread_index(out, fail, probe):
    tx = cuda.threadIdx.x
    x = cuda.blockIdx.x * cuda.blockDim.x + tx
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    out[y, x] = tx * 1000 + cuda.blockIdx.x * 100 + y + cuda.laneid + probe[fail[y, x]]
    ONE_BLOCK_AT_A_TIME


@cuda.jit
def three_dimensional(out, fail, probe):
    x, y, z = cuda.grid(3)
    out[z, y, x] = x * 1000 + y * 10 + z + probe[fail[z, y, x]]
    ONE_BLOCK_AT_A_TIME
'''

BLOCK = (8, 4)


@pytest.fixture(scope="module")
def kernels(file_source_module):
    runs = KERNELS.replace("    ONE_BLOCK_AT_A_TIME\n", "")
    one_at_a_time = re.sub(r"def (\w+)\(", r"def \1_one_at_a_time(", KERNELS).replace(
        "    ONE_BLOCK_AT_A_TIME\n", "    cuda.shared.array(1, int32)[0] = 0\n")
    return file_source_module("block_run_kernels", runs + one_at_a_time)


def test_a_grid_row_of_blocks_runs_row_of_threads_by_row_of_threads(kernels):
    # A 4 x 2 grid of 8 x 4 blocks is small enough for the calling thread,
    # which takes each grid row as one run.
    grid = (4, 2)
    order = np.full((grid[1] * BLOCK[1], grid[0] * BLOCK[0]), -1, np.int32)
    kernels.record_order[grid, BLOCK](order, np.zeros(1, np.int32))
    assert order.ravel().tolist() == list(range(order.size)), (
        f"the threads of a grid row of blocks should run row by row across the row:\n{order}")

    kernels.record_order_one_at_a_time[grid, BLOCK](order, np.zeros(1, np.int32))
    blocks = order.reshape(grid[1], BLOCK[1], grid[0], BLOCK[0]).transpose(0, 2, 1, 3)
    assert blocks.ravel().tolist() == list(range(order.size)), (
        f"the twin should run its blocks one after the other:\n{order}")


# Failing threads as (x, y) in a 4 x 2 grid (or 40 x 3, through the
# workers) of 8 x 4 blocks.
FAILURES = {
    "none": [],
    "one in the middle of a run": [(19, 6)],
    "in the first and last block of a run": [(3, 5), (30, 7)],
    "a later block failing on an earlier row": [(10, 3), (27, 1)],
    "in the last row of a block": [(12, 3)],
    "in every block of a run": [(2 + 8 * b, 4 + b % 4) for b in range(4)],
}


@pytest.mark.parametrize("grid", [(4, 2), (40, 3)], ids=["calling thread", "workers"])
@pytest.mark.parametrize("failures", FAILURES.values(), ids=FAILURES.keys())
@pytest.mark.parametrize("kernel", ["global_index_only", "block_and_thread_index"])
def test_index_errors_end_their_block_alone_as_when_blocks_run_one_at_a_time(
        kernels, kernel, failures, grid):
    fail = np.zeros((grid[1] * BLOCK[1], grid[0] * BLOCK[0]), np.int64)
    for x, y in failures:
        fail[y, x] = 1
    expect_the_twins_to_agree(kernels, kernel, grid, BLOCK, fail, failures)


# Failing threads as (x, y, z) in a 4 x 2 grid of 8 x 2 x 2 blocks: rows of
# a block are (y, z) pairs, y fastest.
FAILURES_3D = {
    "none": [],
    "a later block failing in an earlier z": [(5, 1, 1), (27, 0, 0)],
    "in the last row of a block": [(12, 1, 1)],
}


@pytest.mark.parametrize("failures", FAILURES_3D.values(), ids=FAILURES_3D.keys())
def test_runs_of_blocks_with_three_dimensional_blocks_finish_as_blocks_one_at_a_time(
        kernels, failures):
    grid, block = (4, 2), (8, 2, 2)
    fail = np.zeros((block[2], grid[1] * block[1], grid[0] * block[0]), np.int64)
    for x, y, z in failures:
        fail[z, y, x] = 1
    expect_the_twins_to_agree(kernels, "three_dimensional", grid, block, fail, failures)


def expect_the_twins_to_agree(kernels, kernel, grid, block, fail, failures):
    probe = np.zeros(1, np.int64)
    results = []
    for name in (kernel, kernel + "_one_at_a_time"):
        out = np.full(fail.shape, -1, np.int64)
        message = None
        try:
            getattr(kernels, name)[grid, block](out, fail, probe)
        except IndexError as error:
            # The message names the kernel, which differs between the twins.
            message = str(error).split(" (array")[0]
        results.append((message, out))
    (message, out), (expected_message, expected_out) = results
    assert message == expected_message, (
        f"{kernel} with failing threads {failures} should report what its twin does")
    mismatched = np.argwhere(out != expected_out)
    assert not len(mismatched), (
        f"{kernel} with failing threads {failures}: threads (y, x) {mismatched[:8].tolist()} "
        f"wrote {out[tuple(mismatched[0])]} where blocks run one at a time write "
        f"{expected_out[tuple(mismatched[0])]}")
    assert (out != -1).sum() > out.size // 2, "most threads should have run"
