"""kiln.reduction.Reduction: Numba's `cuda.reduce` call contract
(`r(arr, size=None, res=None, init=0, stream=0)`) over the synthesized
reduction kernel.

A stand-in for the kernel dispatcher implements the kernel's contract
(frontend/emit/synthesized_kernels.h: grid-stride folding per thread, a tree per
block, one partial per block with values, init folded into block 0 when
use_init) so the multi-pass logic is checked exactly; the last tests run
the real kernels of examples/reductions.py.
"""

import ctypes
import functools

import numpy as np
import pytest

import kiln.cuda as cuda
from kiln.cuda.devicearray import _extent
from kiln.reduction import Reduction


def host_view(device):
    low, high = _extent(device.shape, device.strides, device.itemsize)
    if high - low == 0:
        return np.empty(device.shape, device.dtype)
    raw = (ctypes.c_char * (high - low)).from_address(device.device_pointer + low)
    return np.ndarray(device.shape, device.dtype, buffer=raw, offset=-low, strides=device.strides)


class FakeReductionKernel:
    """The synthesized reduction kernel's semantics, in Python."""

    def __init__(self, core, dtypes=("int32", "int64", "float32", "float64")):
        self.core = core
        self.dtypes = [np.dtype(d) for d in dtypes]
        self.signatures = [
            (f"array({d.name}, 1d, A)", f"array({d.name}, 1d, C)", d.name, "bool") for d in self.dtypes
        ]
        self.launches = []

    def __getitem__(self, config):
        grid, block, stream = config
        assert 1 <= block <= 1024 and grid >= 1

        def launch(values, partials, init, use_init):
            assert isinstance(values, cuda.DeviceNDArray) and isinstance(partials, cuda.DeviceNDArray)
            assert values.dtype == partials.dtype and values.dtype in self.dtypes
            assert partials.is_c_contiguous()
            assert isinstance(init, values.dtype.type)
            data = host_view(values).copy()
            out = host_view(partials)
            n = data.shape[0]
            stride = grid * block
            for b in range(grid):
                base = b * block
                active = min(n - base, block)
                if active <= 0:
                    continue
                shared = [functools.reduce(self.core, data[base + t :: stride]) for t in range(active)]
                width = 1
                while width < block:
                    for t in range(0, active, 2 * width):
                        if t + width < active:
                            shared[t] = self.core(shared[t], shared[t + width])
                    width *= 2
                result = shared[0]
                if use_init and b == 0:
                    result = self.core(result, init)
                assert b < partials.shape[0]
                out[b] = result
            self.launches.append((grid, block, stream, n))

        return launch


def _add(a, b):
    return a + b


@pytest.fixture
def sum_reduce():
    return Reduction("sum_reduce", FakeReductionKernel(_add))


@pytest.fixture
def max_reduce():
    return Reduction("max_reduce", FakeReductionKernel(max))


@pytest.mark.parametrize("n", [1, 2, 5, 255, 256, 257, 1234, 5000, 70000])
def test_sum_sizes(sum_reduce, n):
    values = np.arange(1, n + 1, dtype=np.float64)
    result = sum_reduce(values)
    assert result == values.sum()
    assert isinstance(result, np.float64)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_dtypes(sum_reduce, max_reduce, dtype):
    values = np.arange(1, 1235).astype(dtype)
    assert sum_reduce(values) == values.sum()
    assert type(sum_reduce(values)) is np.dtype(dtype).type
    shuffled = np.random.default_rng(1).permutation(values)
    assert max_reduce(shuffled) == 1234


def test_init(sum_reduce, max_reduce):
    values = np.arange(1, 1235, dtype=np.float64)
    assert sum_reduce(values, init=10) == values.sum() + 10
    assert max_reduce(np.array([-5, -3], dtype=np.int64), init=-100) == -3
    # Empty input returns init, typed as the array.
    empty = sum_reduce(np.zeros(0, dtype=np.float32), init=7)
    assert empty == 7 and type(empty) is np.float32
    assert sum_reduce(np.zeros(0, dtype=np.int32)) == 0


def test_size(sum_reduce):
    values = np.arange(100, dtype=np.int64)
    assert sum_reduce(values, size=10) == 45
    assert sum_reduce(values, size=0, init=3) == 3
    assert sum_reduce(cuda.to_device(values), size=50) == values[:50].sum()


def test_device_input_and_res(sum_reduce):
    values = np.arange(1, 1235, dtype=np.float64)
    d_values = cuda.to_device(values)
    res = cuda.device_array(1, dtype=np.float64)
    assert sum_reduce(values, res=res) is None
    assert res.copy_to_host()[0] == values.sum()
    res2 = cuda.device_array(3, dtype=np.float64)
    res2.copy_to_device(np.zeros(3))
    assert sum_reduce(d_values, res=res2) is None
    np.testing.assert_array_equal(res2.copy_to_host(), [values.sum(), 0, 0])
    # The input is not overwritten (the seed checks this).
    np.testing.assert_array_equal(d_values.copy_to_host(), values)
    assert sum_reduce(d_values) == values.sum()


def test_strided_input(sum_reduce):
    values = np.arange(3000, dtype=np.int64)
    assert sum_reduce(values[::3]) == values[::3].sum()
    assert sum_reduce(cuda.to_device(values)[::-7]) == values[::-7].sum()


def test_errors(sum_reduce):
    with pytest.raises(TypeError, match="1D"):
        sum_reduce(np.ones((2, 2)))
    with pytest.raises(TypeError, match="int32, int64, float32, float64"):
        sum_reduce(np.ones(4, dtype=np.uint8))


def test_stream(sum_reduce):
    s = cuda.stream()
    values = np.arange(5000, dtype=np.float32)
    assert sum_reduce(values, stream=s) == values.sum()
    assert all(launch[2] == s.handle for launch in sum_reduce._kernel.launches)


def test_passes(sum_reduce):
    kernel = sum_reduce._kernel
    sum_reduce(np.ones(100, dtype=np.float64))
    assert len(kernel.launches) == 1  # one block: its partial is the result
    kernel.launches.clear()
    assert sum_reduce(np.ones(1_000_000, dtype=np.float64)) == 1_000_000
    assert len(kernel.launches) == 2
    assert kernel.launches[0][0] <= 1024 and kernel.launches[1][0] == 1


def test_repr(sum_reduce):
    assert "sum_reduce" in repr(sum_reduce)
    assert sum_reduce.dtypes == [np.dtype(d) for d in ("int32", "int64", "float32", "float64")]


# --- the real kernels, from examples/reductions.py built with kiln build --module -----------


@pytest.fixture(scope="module")
def reductions(example):
    return example("reductions")


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_built_reductions(reductions, dtype):
    values = np.arange(1, 1235).astype(dtype)
    assert isinstance(reductions.sum_reduce, Reduction)
    assert reductions.sum_reduce(values) == values.sum()
    assert reductions.sum_reduce(values, init=10) == values.sum() + 10
    assert reductions.max_reduce(np.random.default_rng(0).permutation(values)) == 1234
    big = np.ones(300_000, dtype=dtype)
    assert reductions.sum_reduce(big) == 300_000


def test_built_seed_usage(reductions):
    sum_reduce = reductions.sum_reduce
    A = np.arange(1234, dtype=np.float64) + 1
    assert sum_reduce(A) == A.sum()
    r = cuda.device_array(1, dtype=np.float64)
    sum_reduce(A, res=r)
    assert r.copy_to_host()[0] == A.sum()
    A_d = cuda.to_device(A)
    sum_reduce(A_d, res=r)
    assert np.all(np.allclose(A, A_d.copy_to_host()))
