"""kiln._interop: zero-copy views of foreign arrays through the CUDA Array
Interface and DLPack, on the CPU target (where device memory is host
memory, so a NumPy array's memory can stand in for a producer's)."""

import gc
import weakref

import numpy as np
import pytest

import kiln.cuda as cuda
from kiln import _interop, _runtime
from kiln.cuda.devicearray import as_device_array

pytestmark = pytest.mark.skipif(
    _runtime.target() != "cpu", reason="NumPy memory stands in for device memory on the CPU target only"
)


class HostCAI:
    """A producer exporting a NumPy array's memory through the CAI."""

    def __init__(self, array, version=3, stream=None, strides=None, mask=None, **extra):
        self.array = array
        self.desc = {
            "shape": array.shape,
            "typestr": array.dtype.str,
            "data": (array.__array_interface__["data"][0], False),
            "version": version,
            "strides": strides,
            **extra,
        }
        if version >= 1:
            self.desc["mask"] = mask
        if version >= 3:
            self.desc["stream"] = stream

    @property
    def __cuda_array_interface__(self):
        return self.desc


def test_cai_view_is_zero_copy():
    host = np.arange(12, dtype=np.float32)
    producer = HostCAI(host)
    view = as_device_array(producer, 0)
    assert isinstance(view, cuda.DeviceNDArray)
    assert view.device_pointer == host.__array_interface__["data"][0]
    assert view.owner is producer
    np.testing.assert_array_equal(view.copy_to_host(), host)
    view[3] = 100
    assert host[3] == 100


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_cai_versions(version):
    host = np.arange(6, dtype=np.int64).reshape(2, 3)
    view = cuda.as_cuda_array(HostCAI(host, version=version))
    assert view.shape == (2, 3) and view.dtype == np.int64
    np.testing.assert_array_equal(view.copy_to_host(), host)


def test_cai_strides():
    base = np.arange(20, dtype=np.float64).reshape(4, 5)
    strided = base[:, ::2]
    view = cuda.as_cuda_array(HostCAI(strided, strides=strided.strides))
    assert view.strides == strided.strides
    np.testing.assert_array_equal(view.copy_to_host(), strided)


def test_cai_structured_descr():
    dtype = np.dtype([("a", np.int32), ("b", np.float32)])
    host = np.zeros(3, dtype=dtype)
    host["a"] = [1, 2, 3]
    producer = HostCAI(host, descr=dtype.descr)
    view = cuda.as_cuda_array(producer)
    assert view.dtype == dtype
    np.testing.assert_array_equal(view.copy_to_host()["a"], [1, 2, 3])


def test_cai_stream_is_synchronized(monkeypatch):
    s = cuda.stream()
    synced = []
    original = _runtime.Stream.wrap

    class Recorder:
        def __init__(self, handle):
            self.inner = original(handle)
            self.handle = handle

        def synchronize(self):
            synced.append(self.handle)
            self.inner.synchronize()

    monkeypatch.setattr(_interop, "_synchronize_stream", lambda h: Recorder(h).synchronize())
    host = np.arange(4.0)
    view = as_device_array(HostCAI(host, stream=s.handle), 0)
    assert synced == [s.handle]
    assert view.stream_handle == s.handle
    as_device_array(HostCAI(host, stream=1), 0)
    assert synced[-1] == 1
    cuda.as_cuda_array(HostCAI(host, stream=s.handle), sync=False)
    assert len(synced) == 2


def test_cai_stream_for_real_streams():
    s = cuda.stream()
    host = np.arange(4.0)
    view = cuda.as_cuda_array(HostCAI(host, stream=s.handle))
    np.testing.assert_array_equal(view.copy_to_host(), host)


def test_cai_errors():
    host = np.arange(4.0)
    with pytest.raises(NotImplementedError, match="Masked"):
        cuda.as_cuda_array(HostCAI(host, mask=np.ones(4, bool)))
    with pytest.raises(ValueError, match="stream 0"):
        cuda.as_cuda_array(HostCAI(host, stream=0))
    with pytest.raises(TypeError, match="cuda array interface"):
        cuda.as_cuda_array(np.zeros(3))
    with pytest.raises(TypeError, match="cuda array interface"):
        cuda.as_cuda_array([1, 2])
    assert as_device_array(object(), 0) is None
    assert as_device_array(np.zeros(2), 0) is None


def test_cai_of_kiln_arrays_round_trips():
    device = cuda.to_device(np.arange(10, dtype=np.int16))
    view = cuda.as_cuda_array(HostCAI(np.empty(0), version=3))  # a trivial empty producer
    assert view.size == 0

    class Wrapper:
        def __init__(self, inner):
            self.__cuda_array_interface__ = inner.__cuda_array_interface__

    again = cuda.as_cuda_array(Wrapper(device[::-2]))
    np.testing.assert_array_equal(again.copy_to_host(), np.arange(10, dtype=np.int16)[::-2])


def test_producer_stays_alive():
    host = np.arange(8.0)
    producer = HostCAI(host)
    alive = weakref.ref(producer)
    view = cuda.as_cuda_array(producer)
    del producer
    gc.collect()
    assert alive() is not None
    del view
    gc.collect()
    assert alive() is None


# --- DLPack ---------------------------------------------------------------------


def test_dlpack_capsule_from_numpy():
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    capsule = host.__dlpack__()
    view = as_device_array(capsule, 0)
    assert view.shape == (3, 4) and view.dtype == np.float32
    assert view.device_pointer == host.__array_interface__["data"][0]
    np.testing.assert_array_equal(view.copy_to_host(), host)
    view[0, 0] = 42
    assert host[0, 0] == 42
    # A capsule is used once.
    with pytest.raises(ValueError, match="already consumed"):
        as_device_array(capsule, 0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float16, np.float64, np.complex64, np.bool_])
def test_dlpack_dtypes(dtype):
    host = (np.arange(6) % 2).astype(dtype)
    view = as_device_array(host.__dlpack__(), 0)
    assert view.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(view.copy_to_host(), host)


def test_dlpack_strided_and_offset():
    base = np.arange(30, dtype=np.int32).reshape(5, 6)
    strided = base[1:, ::-2]
    view = as_device_array(strided.__dlpack__(), 0)
    assert view.strides == strided.strides
    np.testing.assert_array_equal(view.copy_to_host(), strided)


class DLPackProducer:
    """An object with __dlpack__/__dlpack_device__ (NumPy-backed, CPU)."""

    def __init__(self, array, device=(1, 0)):
        self.array = array
        self.device = device
        self.calls = []

    def __dlpack__(self, stream=None, **kwargs):
        self.calls.append(stream)
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.device


def test_dlpack_protocol_object():
    host = np.arange(5, dtype=np.float64)
    producer = DLPackProducer(host)
    view = as_device_array(producer, 0)
    np.testing.assert_array_equal(view.copy_to_host(), host)
    assert producer.calls == [None]
    assert cuda.as_cuda_array(producer).shape == (5,)


def test_dlpack_deleter_runs_when_view_dies():
    host = np.arange(5, dtype=np.float64)
    base_refs = _refcount(host)
    view = as_device_array(host.__dlpack__(), 0)
    assert _refcount(host) > base_refs  # the exported tensor holds the array
    del view
    gc.collect()
    assert _refcount(host) == base_refs


def test_dlpack_unused_capsule_cleans_up():
    host = np.arange(5, dtype=np.float64)
    base_refs = _refcount(host)
    capsule = host.__dlpack__()
    del capsule
    gc.collect()
    assert _refcount(host) == base_refs


def test_dlpack_cuda_tensor_rejected_on_cpu_target():
    producer = DLPackProducer(np.zeros(3), device=(2, 0))
    with pytest.raises(TypeError, match="CPU target"):
        as_device_array(producer, 0)
    assert producer.calls == []


def test_dlpack_cpu_tensor_rejected_on_cuda_target(monkeypatch):
    monkeypatch.setattr(_interop, "_target", lambda: "cuda")
    with pytest.raises(TypeError, match="NumPy array"):
        as_device_array(DLPackProducer(np.zeros(3)), 0)
    with pytest.raises(TypeError, match="NumPy array"):
        as_device_array(np.zeros(3).__dlpack__(), 0)


def test_not_a_capsule():
    with pytest.raises(TypeError):
        _interop.from_dlpack(object())


def _refcount(obj):
    import sys

    return sys.getrefcount(obj)
