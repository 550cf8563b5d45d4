"""Device functions called with compile-time values, as Numba specializes
them: a dtype, an intrinsic such as cuda.atomic.add, another device
function, literal sizes and shapes, and a literal bool a branch depends on
(the other side is never compiled, as Numba prunes it). Each such argument
makes a specialization of its own and passes nothing at run time. Checked
on the CPU engine against NumPy, and through ptxas for every default
architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda, float64, int32, uint32, uint64, void


@cuda.jit(device=True)
def to_uint64(x):
    return uint64(x)


@cuda.jit(device=True)
def unchanged(x):
    return x


@cuda.jit(device=True)
def shared_update(out, values, dtype, size, update, cast, wrap):
    tid = cuda.threadIdx.x
    cells = cuda.shared.array(size, dtype)
    cells[tid] = 0
    cuda.syncthreads()
    slot = cast(tid % 4)
    if wrap:
        slot = slot % size
    update(cells, slot, values[tid])
    cuda.syncthreads()
    out[tid] = cells[tid]


@cuda.jit(device=True)
def grid_update(out, shape, value, update):
    x, y = cuda.grid(2)
    if x < shape[0] and y < shape[1]:
        update(out, (x, y), value)


@cuda.jit(void(uint32[::1], uint32[::1]))
def add_in_shared(out, values):
    shared_update(out, values, uint32, 32, cuda.atomic.add, unchanged, False)


@cuda.jit(void(float64[::1], float64[::1]))
def max_in_shared(out, values):
    shared_update(out, values, float64, 32, cuda.atomic.max, to_uint64, True)


@cuda.jit(void(int32[:, ::1]))
def add_everywhere(out):
    grid_update(out, (4, 8), 3, cuda.atomic.add)
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("compile_time_arguments"))


def test_a_dtype_a_size_and_an_intrinsic_passed_to_a_device_function(module):
    values = np.arange(32, dtype=np.uint32)
    out = np.zeros(32, dtype=np.uint32)
    module.add_in_shared[1, 32](out, values)
    expected = np.zeros(32, dtype=np.uint32)
    for slot in range(4):
        expected[slot] = values[np.arange(32) % 4 == slot].sum()
    np.testing.assert_array_equal(out, expected)


def test_a_device_function_passed_as_a_cast_and_a_literal_bool_branch(module):
    values = np.linspace(-3.0, 5.0, 32)
    out = np.zeros(32)
    module.max_in_shared[1, 32](out, values)
    expected = np.zeros(32)
    for slot in range(4):
        expected[slot] = max(0.0, values[np.arange(32) % 4 == slot].max())
    np.testing.assert_array_equal(out, expected)


def test_a_literal_shape_tuple_passed_to_a_device_function(module):
    out = np.zeros((4, 8), dtype=np.int32)
    module.add_everywhere[(1, 1), (8, 8)](out)
    np.testing.assert_array_equal(out, 3)


def test_compile_time_arguments_assemble_for_every_default_architecture(tmp_path, kiln):
    fatbins = kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)
    assert len(fatbins) == 3, fatbins
