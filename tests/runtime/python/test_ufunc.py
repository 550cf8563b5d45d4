"""kiln.ufunc.Ufunc: NumPy broadcasting, loop selection, scalars, out= and
stream= over the synthesized ufunc kernel.

Most tests drive `Ufunc` with a stand-in for the kernel dispatcher that
follows the synthesized kernel's contract (frontend/emit/synthesized_kernels.h:
1-d operands of any layout, out[i] = core(x1[i], ...) for i < len(out) and
i < grid * block) on the CPU target's memory; the last ones run the real
kernels of examples/ufuncs.py built with `kiln build --module`.
"""

import ctypes
import math

import numpy as np
import pytest

import kiln.cuda as cuda
from kiln import _runtime
from kiln.cuda.devicearray import _extent
from kiln.ufunc import Ufunc

EXAMPLES_UFUNCS = "ufuncs"


def host_view(device):
    """A NumPy view of a CPU-target device array's memory."""
    low, high = _extent(device.shape, device.strides, device.itemsize)
    if high - low == 0:
        return np.empty(device.shape, device.dtype)
    raw = (ctypes.c_char * (high - low)).from_address(device.device_pointer + low)
    return np.ndarray(device.shape, device.dtype, buffer=raw, offset=-low, strides=device.strides)


class FakeUfuncKernel:
    """Stands in for kiln.kernel.Kernel over a synthesized ufunc kernel."""

    def __init__(self, core, loops):
        self.core = core
        self.loops = [tuple(np.dtype(t) for t in loop) for loop in loops]
        self.signatures = [tuple(f"array({t.name}, 1d, A)" for t in loop) for loop in self.loops]
        self.launches = []

    def __getitem__(self, config):
        grid, block, stream = config
        assert 1 <= block <= 1024 and grid >= 1

        def launch(*args):
            assert all(isinstance(a, cuda.DeviceNDArray) and a.ndim == 1 for a in args)
            dtypes = tuple(a.dtype for a in args)
            assert dtypes in self.loops, f"no specialization for {dtypes}"
            count = min(args[-1].shape[0], grid * block)
            views = [host_view(a)[:count] for a in args]
            views[-1][...] = self.core(*views[:-1])
            self.launches.append((grid, block, stream, count))

        return launch


@pytest.fixture
def add():
    return Ufunc("add_ufunc", FakeUfuncKernel(lambda x, y: x + y, [("f4", "f4", "f4"), ("i8", "i8", "i8")]))


@pytest.fixture
def rel_diff():
    return Ufunc(
        "rel_diff", FakeUfuncKernel(lambda x, y: 2 * (x - y) / (x + y), [("f4", "f4", "f4"), ("f8", "f8", "f8")])
    )


def test_attributes(add):
    assert add.__name__ == "add_ufunc"
    assert add.nin == 2 and add.nout == 1
    assert add.types == ["ff->f", "%s%s->%s" % ((np.dtype(np.int64).char,) * 3)]
    assert "add_ufunc" in repr(add)


def test_host_arrays_give_host_result(add):
    x = np.arange(100, dtype=np.float32)
    result = add(x, 2 * x)
    assert isinstance(result, np.ndarray) and result.dtype == np.float32
    np.testing.assert_array_equal(result, 3 * x)
    ints = np.arange(10)
    np.testing.assert_array_equal(add(ints, ints), 2 * ints)


@pytest.mark.parametrize(
    "shapes",
    [((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((5,), ()), ((), ()), ((1, 6), (6, 1)), ((0, 3), (3,)),
     ((7, 1, 5), (1, 3, 1))],
)
def test_broadcasting(add, shapes):
    a = np.arange(math.prod(shapes[0]), dtype=np.float32).reshape(shapes[0])
    b = (np.arange(math.prod(shapes[1]), dtype=np.float32) * 10).reshape(shapes[1])
    expected = a + b
    result = add(a, b)
    if expected.ndim == 0:
        assert isinstance(result, np.float32) and result == expected
    else:
        assert result.shape == expected.shape
        np.testing.assert_array_equal(result, expected)


@pytest.mark.skipif(_runtime.target() != "cpu", reason="on the CUDA target host inputs are copied contiguously")
def test_collapsed_launches(add):
    kernel = add._kernel
    add(np.ones((50, 40), np.float32), np.ones(40, np.float32))
    assert len(kernel.launches) == 50  # rows: b cannot be flattened with a
    kernel.launches.clear()
    add(np.ones((50, 40), np.float32), np.float32(1))
    assert len(kernel.launches) == 1  # contiguous array and a scalar: one launch
    assert kernel.launches[0][3] == 2000
    kernel.launches.clear()
    add(np.ones((50, 40), np.float32)[:, ::2], np.ones((50, 20), np.float32))
    assert len(kernel.launches) == 1  # both step by one row per 20 elements: one 1-d view each
    kernel.launches.clear()
    add(np.ones((50, 40), np.float32)[:, :20], np.ones((50, 20), np.float32))
    assert len(kernel.launches) == 50


def test_strided_and_reversed_inputs(add):
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    b = np.arange(60, dtype=np.float32).reshape(10, 6).T
    np.testing.assert_array_equal(add(a[::-1, ::3], b[::-1, ::3]), a[::-1, ::3] + b[::-1, ::3])


def test_scalars(add, rel_diff):
    x = np.arange(5, dtype=np.float32)
    # Python floats take the array's type (Numba; NumPy's weak scalars).
    result = add(x, 1.5)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, x + np.float32(1.5))
    ints = np.arange(5)
    assert add(ints, 3).dtype == np.int64
    # Scalars only: their own NumPy types pick the loop.
    assert add(2, 3) == 5 and isinstance(add(2, 3), np.int64)
    assert isinstance(add(np.float32(1), np.float32(2)), np.float32)
    # Ambiguous for Numba (any loop fits two Python floats): NumPy's typing decides.
    assert isinstance(rel_diff(1.0, 3.0), np.float64)
    assert rel_diff(np.float32(1), np.float32(3)) == np.float32(-1)


def test_safe_casts_as_last_resort(rel_diff, add):
    x = np.arange(1, 6, dtype=np.int16)
    result = rel_diff(x, x + 1)
    assert result.dtype == np.float32  # int16 -> float32 is safe
    np.testing.assert_allclose(result, 2 * (x - (x + 1)) / (x + x + 1), rtol=1e-6)
    assert rel_diff(np.arange(3, dtype=np.int64) + 1, np.ones(3)).dtype == np.float64
    with pytest.raises(TypeError, match="no loop.*ff->f"):
        add(np.ones(3, dtype=np.complex64), np.ones(3, dtype=np.complex64))
    with pytest.raises(TypeError, match="no loop"):
        add(np.ones(3, dtype=np.float64), np.ones(3, dtype=np.float64))


def test_device_inputs_give_device_result(add):
    x = np.arange(10, dtype=np.float32)
    d_x = cuda.to_device(x)
    result = add(d_x, d_x)
    assert isinstance(result, cuda.DeviceNDArray)
    np.testing.assert_array_equal(result.copy_to_host(), 2 * x)
    mixed = add(d_x, x)
    assert isinstance(mixed, cuda.DeviceNDArray)
    np.testing.assert_array_equal(mixed.copy_to_host(), 2 * x)
    matrix = cuda.to_device(np.ones((3, 10), np.float32))
    np.testing.assert_array_equal(add(matrix, d_x).copy_to_host(), 1 + np.broadcast_to(x, (3, 10)))
    # Device arrays of another type are converted (Numba would refuse).
    as_int16 = cuda.to_device(np.arange(4, dtype=np.int16))
    np.testing.assert_array_equal(add(as_int16, as_int16).copy_to_host(), 2 * np.arange(4))


def test_out_device(add):
    x = np.arange(10, dtype=np.float32)
    d_x, d_y = cuda.to_device(x), cuda.to_device(x * 2)
    out = cuda.device_array(10, dtype=np.float32)
    assert add(d_x, d_y, out=out) is out
    np.testing.assert_array_equal(out.copy_to_host(), 3 * x)
    out2 = cuda.device_array(10, dtype=np.float32)
    assert add(d_x, d_y, out2) is out2  # positional out, as NumPy
    with pytest.raises(ValueError, match="shape"):
        add(d_x, d_y, out=cuda.device_array(11, dtype=np.float32))
    with pytest.raises(TypeError, match="dtype"):
        add(d_x, d_y, out=cuda.device_array(10, dtype=np.float64))


def test_out_host(add):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros((3, 4), dtype=np.float32)
    assert add(x, x, out=out) is out
    np.testing.assert_array_equal(out, 2 * x)
    strided = np.zeros((3, 8), dtype=np.float32)
    add(x, 1.0, out=strided[:, ::2])
    np.testing.assert_array_equal(strided[:, ::2], x + 1)
    assert (strided[:, 1::2] == 0).all()
    readonly = np.zeros((3, 4), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        add(x, x, out=readonly)


def test_stream(add):
    s = cuda.stream()
    x = np.arange(10, dtype=np.float32)
    result = add(x, x, stream=s)
    np.testing.assert_array_equal(result, 2 * x)
    assert all(launch[2] == s.handle for launch in add._kernel.launches)
    d = add(cuda.to_device(x), x, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), 2 * x)


def test_cuda_array_interface_inputs(add):
    class Producer:
        def __init__(self, array):
            self.array = array
            self.__cuda_array_interface__ = {
                "shape": array.shape, "typestr": array.dtype.str, "strides": None, "version": 3,
                "data": (array.__array_interface__["data"][0], False), "stream": None,
            }

    x = np.arange(6, dtype=np.int64)
    result = add(Producer(x), Producer(x))
    assert isinstance(result, cuda.DeviceNDArray)
    np.testing.assert_array_equal(result.copy_to_host(), 2 * x)


def test_wrong_arity_and_lists(add):
    with pytest.raises(TypeError, match="takes 2 arguments"):
        add(np.ones(3, np.float32))
    np.testing.assert_array_equal(add([1, 2], [3, 4]), [4, 6])
    with pytest.raises(ValueError):
        add(np.ones(3, np.float32), np.ones(4, np.float32))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 1001])
def test_reduce_method(add, n):
    values = np.arange(1, n + 1, dtype=np.int64)
    assert add.reduce(values) == values.sum()
    device = cuda.to_device(values)
    assert add.reduce(device) == values.sum()
    np.testing.assert_array_equal(device.copy_to_host(), values)  # not modified
    with pytest.raises(TypeError, match="empty"):
        add.reduce(np.zeros(0, np.int64))


def test_inputs_untouched(add):
    x = np.arange(5, dtype=np.float32)
    copy = x.copy()
    add(x, x)
    np.testing.assert_array_equal(x, copy)


# --- the real kernels, from examples/ufuncs.py built with kiln build --module -----------


@pytest.fixture(scope="module")
def ufuncs(example):
    return example(EXAMPLES_UFUNCS)


def test_built_ufuncs(ufuncs):
    assert isinstance(ufuncs.add_ufunc, Ufunc)
    x = np.arange(1000, dtype=np.float32)
    np.testing.assert_array_equal(ufuncs.add_ufunc(x, 2 * x), 3 * x)
    np.testing.assert_array_equal(ufuncs.add_ufunc(np.arange(10), 5), np.arange(10) + 5)
    grid = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(ufuncs.add_ufunc(grid, grid[0]), grid + grid[0])
    d = ufuncs.add_ufunc(cuda.to_device(x), cuda.to_device(x))
    assert isinstance(d, cuda.DeviceNDArray)
    np.testing.assert_array_equal(d.copy_to_host(), 2 * x)
    out = cuda.device_array(1000, dtype=np.float32)
    ufuncs.add_ufunc(cuda.to_device(x), cuda.to_device(x), out=out)
    np.testing.assert_array_equal(out.copy_to_host(), 2 * x)


def test_built_gaussian_pdf(ufuncs):
    x = np.random.default_rng(0).uniform(-3, 3, size=10000).astype(np.float32)
    got = ufuncs.gaussian_pdf(x, 0.0, 1.0)
    expected = np.exp(-0.5 * x.astype(np.float64) ** 2) / math.sqrt(2 * math.pi)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_built_rel_diff(ufuncs):
    for dtype in (np.float32, np.float64):
        p = np.arange(1, 11, dtype=dtype)
        q = p[::-1].copy()
        got = ufuncs.rel_diff(p, q)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, 2 * (p - q) / (p + q), rtol=1e-6)
