"""kiln.cuda, the host API: device arrays, host memory, streams,
events and the device, on the CPU target, compared with NumPy and with what
Numba's `numba.cuda` does for the same calls."""

import ctypes

import numpy as np
import pytest

import kiln.cuda as cuda
from kiln import _runtime


def test_target():
    assert _runtime.target() in ("cpu", "cuda")


# --- allocation and copies -------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128, np.bool_])
def test_round_trip(dtype):
    host = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    device = cuda.to_device(host)
    assert isinstance(device, cuda.DeviceNDArray)
    assert device.shape == (2, 3, 4)
    assert device.dtype == np.dtype(dtype)
    assert device.size == 24 and device.ndim == 3 and len(device) == 2
    assert device.strides == host.strides
    assert device.nbytes == host.nbytes
    back = device.copy_to_host()
    np.testing.assert_array_equal(back, host)
    assert back.dtype == host.dtype


def test_to_device_is_a_copy():
    host = np.arange(5.0)
    device = cuda.to_device(host)
    host[:] = -1
    np.testing.assert_array_equal(device.copy_to_host(), np.arange(5.0))


def test_to_device_of_device_array_is_itself():
    device = cuda.to_device(np.arange(3))
    assert cuda.to_device(device) is device


def test_to_device_with_to():
    target = cuda.device_array(4, dtype=np.int64)
    result = cuda.to_device(np.arange(4), to=target)
    assert result is target
    np.testing.assert_array_equal(target.copy_to_host(), np.arange(4))


def test_to_device_of_lists_scalars_and_strided_arrays():
    np.testing.assert_array_equal(cuda.to_device([1, 2, 3]).copy_to_host(), [1, 2, 3])
    scalar = cuda.to_device(np.float32(2.5))
    assert scalar.shape == () and scalar.copy_to_host()[()] == np.float32(2.5)
    strided = np.arange(20.0)[::3]
    np.testing.assert_array_equal(cuda.to_device(strided).copy_to_host(), strided)
    fortran = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    device = cuda.to_device(fortran)
    assert device.is_f_contiguous() and not device.is_c_contiguous()
    np.testing.assert_array_equal(device.copy_to_host(), fortran)


def test_device_array_and_like():
    array = cuda.device_array((1024, 2048), dtype=np.float32)
    assert array.shape == (1024, 2048) and array.dtype == np.float32
    assert array.is_c_contiguous()
    assert cuda.device_array(5).dtype == np.float64
    fortran = cuda.device_array((3, 4), dtype="i4", order="F")
    assert fortran.strides == (4, 12)
    like = cuda.device_array_like(np.zeros((3, 4), dtype=np.int16, order="F"))
    assert like.shape == (3, 4) and like.dtype == np.int16 and like.strides == (2, 6)
    like = cuda.device_array_like(cuda.to_device(np.zeros(7, dtype=np.uint8)))
    assert like.shape == (7,) and like.dtype == np.uint8
    # A non-contiguous template gets compact strides in the same axis order.
    template = np.zeros((4, 6), dtype=np.float32)[:, ::2]
    assert cuda.device_array_like(template).strides == (12, 4)


def test_empty_arrays():
    empty = cuda.device_array(0, dtype=np.float32)
    assert empty.size == 0 and empty.shape == (0,)
    assert empty.copy_to_host().shape == (0,)
    empty.copy_to_device(np.zeros(0, dtype=np.float32))
    assert cuda.to_device(np.zeros((0, 3))).copy_to_host().shape == (0, 3)


def test_copy_to_host_into_given_array():
    device = cuda.to_device(np.arange(6, dtype=np.int32).reshape(2, 3))
    out = np.zeros((2, 3), dtype=np.int32)
    assert device.copy_to_host(out) is out
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3))
    with pytest.raises(TypeError, match="incompatible dtype"):
        device.copy_to_host(np.zeros((2, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="incompatible shape"):
        device.copy_to_host(np.zeros((3, 3), dtype=np.int32))
    # A strided destination is filled through a staging copy.
    big = np.zeros((2, 6), dtype=np.int32)
    device.copy_to_host(big[:, ::2])
    np.testing.assert_array_equal(big[:, ::2], np.arange(6).reshape(2, 3))
    assert (big[:, 1::2] == 0).all()


def test_copy_to_device():
    device = cuda.device_array(5, dtype=np.float64)
    device.copy_to_device(np.arange(5.0))
    np.testing.assert_array_equal(device.copy_to_host(), np.arange(5.0))
    other = cuda.to_device(np.arange(5.0) * 2)
    device.copy_to_device(other)
    np.testing.assert_array_equal(device.copy_to_host(), np.arange(5.0) * 2)
    with pytest.raises(TypeError, match="incompatible dtype"):
        device.copy_to_device(np.arange(5, dtype=np.int32))
    with pytest.raises(ValueError, match="incompatible shape"):
        device.copy_to_device(np.arange(6.0))
    # From a strided host array.
    device.copy_to_device(np.arange(10.0)[::2])
    np.testing.assert_array_equal(device.copy_to_host(), np.arange(10.0)[::2])


def test_numpy_conversion():
    device = cuda.to_device(np.arange(4))
    np.testing.assert_array_equal(np.asarray(device), np.arange(4))
    assert np.asarray(device, dtype=np.float32).dtype == np.float32


# --- indexing ------------------------------------------------------------------


def test_element_access_returns_numpy_scalars():
    host = np.arange(10, dtype=np.float32)
    device = cuda.to_device(host)
    assert device[3] == 3.0 and type(device[3]) is np.float32
    assert device[-1] == 9.0
    matrix = cuda.to_device(np.arange(12, dtype=np.int64).reshape(3, 4))
    assert matrix[2, 1] == 9 and type(matrix[2, 1]) is np.int64
    assert matrix[-1, -1] == 11
    with pytest.raises(IndexError):
        device[10]
    with pytest.raises(IndexError):
        matrix[0, 0, 0]


@pytest.mark.parametrize(
    "index",
    [
        slice(None),
        slice(2, 9),
        slice(None, None, 2),
        slice(None, None, -1),
        slice(8, 1, -3),
        slice(100, 200),
        (slice(None), 1),
        (1, slice(None)),
        (slice(None, None, -1), slice(1, None, 2)),
        (Ellipsis, 2),
        (Ellipsis,),
        (0, Ellipsis),
        (slice(1, 3), Ellipsis, slice(None, None, -2)),
        (None, slice(None), 1),
    ],
)
def test_views_match_numpy(index):
    host = np.arange(3 * 10 * 4, dtype=np.int32).reshape(3, 10, 4)
    if not isinstance(index, tuple) or len(index) < 3 and Ellipsis not in index and None not in index:
        host = np.arange(10 * 4, dtype=np.int32).reshape(10, 4) if isinstance(index, tuple) else np.arange(10)
    device = cuda.to_device(host)
    view = device[index]
    expected = host[index]
    assert isinstance(view, cuda.DeviceNDArray)
    assert view.shape == expected.shape
    assert view.strides == expected.strides
    np.testing.assert_array_equal(view.copy_to_host(), expected)


def test_views_share_memory_and_owner():
    device = cuda.to_device(np.zeros(10))
    view = device[2:5]
    assert view.owner is device.owner
    view.copy_to_device(np.ones(3))
    np.testing.assert_array_equal(device.copy_to_host(), [0, 0, 1, 1, 1, 0, 0, 0, 0, 0])
    # The view keeps the allocation alive.
    del device
    np.testing.assert_array_equal(view.copy_to_host(), np.ones(3))


def test_unsupported_indices():
    device = cuda.to_device(np.arange(5))
    with pytest.raises(IndexError, match="integers, slices"):
        device[[0, 1]]
    with pytest.raises(IndexError):
        device[np.array([True, False, True, False, True])]


def test_setitem():
    host = np.arange(12, dtype=np.float64).reshape(3, 4)
    device = cuda.to_device(host)
    device[0] = 7
    host[0] = 7
    device[1, 2] = -1.5
    host[1, 2] = -1.5
    device[2, :] = np.arange(4) * 10
    host[2, :] = np.arange(4) * 10
    device[:, 3] = 0
    host[:, 3] = 0
    device[::2, ::-1] = np.array([1, 2, 3, 4])
    host[::2, ::-1] = np.array([1, 2, 3, 4])
    np.testing.assert_array_equal(device.copy_to_host(), host)
    device[:] = cuda.to_device(np.ones((3, 4)))
    np.testing.assert_array_equal(device.copy_to_host(), np.ones((3, 4)))
    with pytest.raises(ValueError):
        device[0] = np.arange(5)
    with pytest.raises(ValueError):
        device[0] = np.zeros((2, 4))


def test_reshape_ravel_squeeze_view():
    host = np.arange(24, dtype=np.int32)
    device = cuda.to_device(host)
    np.testing.assert_array_equal(device.reshape(4, 6).copy_to_host(), host.reshape(4, 6))
    np.testing.assert_array_equal(device.reshape((2, -1, 3)).copy_to_host(), host.reshape(2, -1, 3))
    np.testing.assert_array_equal(device.reshape(4, 6, order="F").copy_to_host(), host.reshape(4, 6, order="F"))
    matrix = device.reshape(4, 6)
    np.testing.assert_array_equal(matrix.ravel().copy_to_host(), host)
    with pytest.raises(NotImplementedError, match="copying"):
        matrix[:, ::2].ravel()
    with pytest.raises(ValueError):
        device.reshape(5, 5)
    np.testing.assert_array_equal(device.reshape(1, 24, 1).squeeze().copy_to_host(), host)
    as_bytes = device.view(np.uint8)
    assert as_bytes.shape == (96,)
    np.testing.assert_array_equal(as_bytes.copy_to_host(), host.view(np.uint8))


def test_transpose_is_a_copy_as_in_numba():
    host = np.arange(6.0).reshape(2, 3)
    device = cuda.to_device(host)
    transposed = device.T
    np.testing.assert_array_equal(transposed.copy_to_host(), host.T)
    assert transposed.is_c_contiguous()


def test_non_contiguous_copy_to_host_keeps_strides():
    host = np.arange(40, dtype=np.float32).reshape(5, 8)
    view = cuda.to_device(host)[1:4, ::3]
    back = view.copy_to_host()
    np.testing.assert_array_equal(back, host[1:4, ::3])
    reversed_view = cuda.to_device(host)[::-1, ::-2]
    np.testing.assert_array_equal(reversed_view.copy_to_host(), host[::-1, ::-2])


def test_contiguity_flags():
    device = cuda.device_array((3, 4))
    assert device.is_c_contiguous() and not device.is_f_contiguous()
    assert device.flags == {"C_CONTIGUOUS": True, "F_CONTIGUOUS": False}
    assert not device[:, ::2].is_c_contiguous()
    assert device[1].is_c_contiguous()
    assert device[:, 1:2].is_f_contiguous() is False
    assert cuda.device_array((3, 1)).is_f_contiguous()


def test_split():
    device = cuda.to_device(np.arange(10))
    parts = [p.copy_to_host() for p in device.split(4)]
    assert [list(p) for p in parts] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_len_of_0d_raises():
    with pytest.raises(TypeError):
        len(cuda.to_device(np.float64(1.0)))


# --- CUDA Array Interface export -----------------------------------------------------


def test_cuda_array_interface():
    device = cuda.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    cai = device.__cuda_array_interface__
    assert cai["version"] == 3
    assert cai["shape"] == (3, 4)
    assert cai["strides"] is None
    assert cai["typestr"] == "<f4"
    assert cai["data"] == (device.device_pointer, False)
    assert cai["stream"] is None
    strided = device[:, ::2].__cuda_array_interface__
    assert strided["strides"] == (16, 8)
    assert strided["data"][0] == device.device_pointer
    s = cuda.stream()
    assert cuda.device_array(3, stream=s).__cuda_array_interface__["stream"] == s.handle
    # On the CPU target the pointer is host memory: read it back directly.
    values = (ctypes.c_float * 12).from_address(cai["data"][0])
    assert list(values) == list(range(12))
    assert cuda.is_cuda_array(device)
    assert not cuda.is_cuda_array(np.zeros(3))
    assert cuda.as_cuda_array(device) is device


# --- host memory ---------------------------------------------------------------------


def test_pinned_array():
    pinned = cuda.pinned_array(16, dtype=np.int32)
    assert isinstance(pinned, np.ndarray) and pinned.shape == (16,) and pinned.dtype == np.int32
    pinned[:] = 0
    device = cuda.device_array_like(pinned)
    device.copy_to_device(np.arange(16, dtype=np.int32))
    device.copy_to_host(pinned)
    np.testing.assert_array_equal(pinned, np.arange(16))
    fortran = cuda.pinned_array((3, 4), dtype=np.float64, order="F")
    assert fortran.flags.f_contiguous
    assert cuda.pinned_array(0).size == 0


def test_mapped_array_exports_its_device_pointer():
    mapped = cuda.mapped_array((4, 5), dtype=np.float32)
    assert isinstance(mapped, np.ndarray) and isinstance(mapped, cuda.MappedNDArray)
    mapped[:] = np.arange(20, dtype=np.float32).reshape(4, 5)
    cai = mapped.__cuda_array_interface__
    assert cai["shape"] == (4, 5) and cai["typestr"] == "<f4"
    view = cuda.as_cuda_array(mapped)
    np.testing.assert_array_equal(view.copy_to_host(), mapped)
    # A slice is still in mapped memory, at the right offset.
    row = mapped[2]
    np.testing.assert_array_equal(cuda.as_cuda_array(row).copy_to_host(), mapped[2])
    # Arithmetic results are ordinary host memory: no interface.
    assert not hasattr(mapped + 1, "__cuda_array_interface__")


# --- streams and events ---------------------------------------------------------------


def test_streams():
    s = cuda.stream()
    assert isinstance(s.handle, int) and s.handle != 0
    assert int(s) == s.handle
    s.synchronize()
    assert s.query() in (True, False)
    with s.auto_synchronize() as same:
        assert same is s
        device = cuda.to_device(np.arange(100), stream=s)
        host = device.copy_to_host(stream=s)
    np.testing.assert_array_equal(host, np.arange(100))
    assert cuda.default_stream().handle == 0
    assert cuda.legacy_default_stream().handle == 1
    assert cuda.per_thread_default_stream().handle == 2
    cuda.default_stream().synchronize()
    external = cuda.external_stream(s.handle)
    assert external.handle == s.handle
    external.synchronize()
    assert "stream" in repr(s).lower()


def test_array_bound_to_stream_copies_on_it():
    s = cuda.stream()
    pinned = cuda.pinned_array(64, dtype=np.int32)
    pinned[:] = np.arange(64)
    device = cuda.device_array_like(pinned, s)
    assert device.stream_handle == s.handle
    device.copy_to_device(pinned, stream=s)
    out = np.zeros(64, dtype=np.int32)
    device.copy_to_host(out)  # on the array's stream, asynchronously
    s.synchronize()
    np.testing.assert_array_equal(out, np.arange(64))
    assert device.bind(0).stream_handle == 0


def test_events():
    s = cuda.stream()
    start = cuda.event()
    stop = cuda.event()
    start.record(stream=s)
    cuda.to_device(np.arange(1000), stream=s)
    stop.record(stream=s)
    while not stop.query():
        pass
    stop.synchronize()
    elapsed = start.elapsed_time(stop)
    assert elapsed >= 0.0
    assert cuda.event_elapsed_time(start, stop) >= 0.0
    untimed = cuda.event(timing=False)
    untimed.record()
    untimed.synchronize()
    untimed.wait(s)


def test_synchronize_and_defer_cleanup_keep_arrays_made_inside():
    assert cuda.synchronize() is None
    ran = []
    with cuda.defer_cleanup():
        with cuda.defer_cleanup():
            dropped = cuda.to_device(np.arange(3))
            kept = cuda.to_device(np.arange(4))
            del dropped
            ran.append(True)
    assert ran, "the body of nested defer_cleanup() blocks did not run"
    np.testing.assert_array_equal(kept.copy_to_host(), np.arange(4))
    host = np.zeros(3)
    with cuda.pinned(host):
        host[:] = 7
        np.testing.assert_array_equal(cuda.to_device(host).copy_to_host(), [7, 7, 7])
    np.testing.assert_array_equal(host, [7, 7, 7])


# --- the device ------------------------------------------------------------------------


def test_device(capsys):
    device = cuda.get_current_device()
    info = _runtime.device_info()
    assert device.name == info["name"]
    assert device.id == info["ordinal"]
    assert device.compute_capability == tuple(info["compute_capability"])
    assert device.MAX_THREADS_PER_BLOCK == info["max_threads_per_block"]
    assert device.WARP_SIZE == 32
    assert cuda.is_available()
    assert cuda.detect() is True
    printed = capsys.readouterr().out
    assert "Found 1 CUDA devices" in printed and "[SUPPORTED]" in printed
    assert cuda.select_device(0).id == 0
    assert len(cuda.list_devices()) == 1


def test_compiler_entry_points_explain_kiln_build():
    for name in ("guvectorize", "compile_ptx"):
        with pytest.raises(AttributeError, match="kiln build"):
            getattr(cuda, name)
    with pytest.raises(AttributeError, match="no attribute"):
        cuda.not_a_thing  # noqa: B018
    for name in ("jit", "vectorize", "reduce"):
        assert callable(getattr(cuda, name)), f"cuda.{name} makes what a module defines in Python"
