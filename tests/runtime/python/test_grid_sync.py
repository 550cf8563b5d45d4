"""cuda.cg.this_grid().sync() on the CPU engine: a grid-wide barrier over a
cooperative launch, every block resident at once, checked against NumPy
(Numba's simulator has no grid barrier to compare with)."""

import importlib
import sys
import textwrap

import numpy as np
import pytest

KERNELS = '''
from kiln import cuda
from numba.cuda import int32


@cuda.jit("void(int32[:, ::1])")
def sequential_rows(M):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    rows = M.shape[0]
    cols = M.shape[1]
    for row in range(1, rows):
        opposite = cols - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()


@cuda.jit
def solve_heat_equation(buf_0, buf_1, timesteps, k):
    i = cuda.grid(1)
    if i >= len(buf_0):
        return
    grid = cuda.cg.this_grid()
    for step in range(timesteps):
        if (step % 2) == 0:
            data = buf_0
            next_data = buf_1
        else:
            data = buf_1
            next_data = buf_0
        curr_temp = data[i]
        if i == 0:
            next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
        elif i == len(data) - 1:
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
        else:
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp) + data[i + 1])
        next_data[i] = next_temp
        grid.sync()


@cuda.jit(device=True)
def whole_grid_barrier():
    cuda.cg.this_grid().sync()


@cuda.jit
def rotate_through_device_function(x, out):
    i = cuda.grid(1)
    x[i] = i * 10
    whole_grid_barrier()
    out[i] = x[(i + 1) % x.size]


@cuda.jit
def no_sync(x):
    x[cuda.grid(1)] = 1


@cuda.jit
def sessionize(user_id, results):
    gid = cuda.grid(1)
    if gid >= len(user_id):
        return
    if gid == 0 or user_id[gid] != user_id[gid - 1]:
        results[gid] = gid
        cuda.cg.this_grid().sync()
        ahead = 1
        while gid + ahead < len(user_id) and results[gid + ahead] == -1:
            results[gid + ahead] = gid
            ahead += 1
'''


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grid_sync")
    (folder / "grid_sync_kernels.py").write_text(textwrap.dedent(KERNELS))
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("grid_sync_kernels")
    finally:
        sys.path.remove(str(folder))


def test_each_row_sees_the_row_before_it_from_every_block(kernels):
    A = np.zeros((256, 1024), dtype=np.int32)
    kernels.sequential_rows[32, 32](A)
    np.testing.assert_array_equal(A, np.tile(np.arange(256), (1024, 1)).T)


def test_the_heat_equation_matches_numpy_step_by_step(kernels):
    from kiln import cuda

    data = np.zeros(1001)
    data[500] = 10000
    buffers = [data.copy(), np.zeros_like(data)]
    for step in range(500):
        current, following = buffers[step % 2], buffers[(step + 1) % 2]
        left = np.concatenate(([0.0], current[:-1]))
        right = np.concatenate((current[1:], [0.0]))
        following[:] = current + 0.25 * (left - 2 * current + right)
    buf_0 = cuda.to_device(data)
    buf_1 = cuda.device_array_like(buf_0)
    kernels.solve_heat_equation.forall(len(data))(buf_0, buf_1, 500, 0.25)
    np.testing.assert_allclose(buf_0.copy_to_host(), buffers[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(buf_1.copy_to_host(), buffers[1], rtol=1e-12, atol=1e-12)
    assert buf_1.copy_to_host().sum() == pytest.approx(10000)


def test_a_device_function_that_syncs_the_grid_makes_its_kernel_cooperative(kernels):
    x = np.zeros(8 * 64, dtype=np.int64)
    out = np.zeros_like(x)
    kernels.rotate_through_device_function[8, 64](x, out)
    np.testing.assert_array_equal(out, np.roll(np.arange(x.size) * 10, -1))
    assert kernels.rotate_through_device_function.cooperative
    kernels.no_sync[1, 1](np.zeros(1, dtype=np.int64))
    assert not kernels.no_sync.cooperative


def test_threads_that_exit_or_skip_the_barrier_count_as_arrived(kernels):
    user_id = np.array([1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 5, 5] * 20, dtype=np.int64)
    results = np.full(user_id.size, -1, dtype=np.int64)
    kernels.sessionize.forall(user_id.size, tpb=32)(user_id, results)
    starts = np.flatnonzero(np.concatenate(([True], user_id[1:] != user_id[:-1])))
    expected = starts[np.searchsorted(starts, np.arange(user_id.size), side="right") - 1]
    np.testing.assert_array_equal(results, expected)


def test_overloads_are_keyed_by_numba_types_and_know_their_grid_limit(kernels):
    from numba.cuda import int32

    overload = kernels.sequential_rows.overloads[(int32[:, ::1],)]
    assert overload.cooperative
    assert "(array(int32, 2d, C))" in kernels.sequential_rows.overloads
    blocks = overload.max_cooperative_grid_blocks(256)
    assert blocks > 0
    assert overload.max_cooperative_grid_blocks((16, 16)) == blocks
    assert overload.max_cooperative_grid_blocks((16, 4, 4)) == blocks
    assert overload.max_cooperative_grid_blocks(32) >= 32


def test_a_grid_too_large_to_be_resident_is_refused_naming_the_limit(kernels):
    overload = kernels.sequential_rows.overloads["(array(int32, 2d, C))"]
    limit = overload.max_cooperative_grid_blocks(32)
    A = np.zeros((2, 32 * (limit + 1)), dtype=np.int32)
    with pytest.raises(ValueError, match=f"a cooperative grid of {limit + 1} blocks of 32 threads "
                                         f"is above the {limit} blocks"):
        kernels.sequential_rows[limit + 1, 32](A)
    with pytest.raises(TypeError, match="overloads are keyed by argument types"):
        kernels.sequential_rows.overloads[42]
