"""kiln.cuda's device arrays export DLPack (`__dlpack__`,
`__dlpack_device__`): on the CPU engine, where device memory is host
memory, NumPy's `from_dlpack` is the consumer that judges the capsules;
the CUDA target's device and stream rules are checked with the target's
name standing in."""

import ctypes
import gc

import numpy as np
import pytest

import kiln.cuda as cuda
from kiln import _dlpack_export, _interop, _runtime
from kiln.cuda.devicearray import as_device_array
from test_gpu_path import run_ok

pytestmark = pytest.mark.skipif(
    _runtime.target() != "cpu", reason="NumPy consumes the capsules only where device memory is host memory"
)

_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


@pytest.fixture(autouse=True)
def no_export_outlives_its_test():
    gc.collect()
    before = _dlpack_export.exported_count()
    yield
    gc.collect()
    assert _dlpack_export.exported_count() == before, "an exported tensor was never let go"


def test_numpy_views_a_device_array_without_a_copy():
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    device = cuda.to_device(host)
    assert device.__dlpack_device__() == (_interop.KDL_CPU, 0)
    view = np.from_dlpack(device)
    np.testing.assert_array_equal(view, host)
    view[1, 2] = -7
    assert device.copy_to_host()[1, 2] == -7, "the NumPy view is not the device array's memory"


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32,
                                   np.float64, np.complex64, np.complex128])
def test_every_number_type_round_trips(dtype):
    host = (np.arange(10) % 3).astype(dtype)
    np.testing.assert_array_equal(np.from_dlpack(cuda.to_device(host)), host)


def test_views_keep_their_strides():
    host = np.arange(60, dtype=np.int64).reshape(6, 10)
    device = cuda.to_device(host)
    for item in [(slice(None), slice(None, None, 3)), (slice(1, 5), slice(2, None)), (slice(None, None, -2),)]:
        np.testing.assert_array_equal(np.from_dlpack(device[item]), host[item], err_msg=f"view {item}")
    np.testing.assert_array_equal(np.from_dlpack(device.T), host.T)


def test_the_consumer_keeps_the_memory_alive():
    device = cuda.to_device(np.arange(1000, dtype=np.float64))
    view = np.from_dlpack(device)
    del device
    gc.collect()
    assert _dlpack_export.exported_count() >= 1, "the export was let go while NumPy still views it"
    np.testing.assert_array_equal(view, np.arange(1000, dtype=np.float64))
    del view


def test_an_unconsumed_capsule_lets_go_when_collected():
    capsule = cuda.to_device(np.ones(4)).__dlpack__()
    assert _capsule_is_valid(capsule, b"dltensor")
    del capsule  # the fixture checks that nothing is left


def test_versioned_capsules_for_consumers_of_dlpack_1():
    host = np.arange(5, dtype=np.int16)
    device = cuda.to_device(host)
    capsule = device.__dlpack__(max_version=(1, 0))
    assert _capsule_is_valid(capsule, b"dltensor_versioned")
    np.testing.assert_array_equal(as_device_array(capsule, 0).copy_to_host(), host)
    assert _capsule_is_valid(device.__dlpack__(max_version=(0, 8)), b"dltensor")


def test_kiln_consumes_its_own_capsules():
    device = cuda.to_device(np.arange(8, dtype=np.float32))
    again = as_device_array(device.__dlpack__(), 0)
    assert again.device_pointer == device.device_pointer
    np.testing.assert_array_equal(again.copy_to_host(), np.arange(8, dtype=np.float32))


def test_copy_true_exports_memory_of_its_own():
    device = cuda.to_device(np.zeros(3))
    copy = np.from_dlpack(device, copy=True)
    copy[0] = 5
    assert device.copy_to_host()[0] == 0, "copy=True shared the device array's memory"
    versioned = device.__dlpack__(max_version=(1, 0), copy=True)
    assert _capsule_is_valid(versioned, b"dltensor_versioned")
    assert as_device_array(versioned, 0).device_pointer != device.device_pointer


def test_records_and_other_devices_are_refused():
    records = cuda.to_device(np.zeros(2, dtype=[("a", np.int32), ("b", np.float64)]))
    with pytest.raises(BufferError, match="no element type for"):
        records.__dlpack__()
    with pytest.raises(BufferError, match=r"cannot be exported to \(2, 0\)"):
        cuda.to_device(np.zeros(2)).__dlpack__(dl_device=(2, 0))


def test_on_the_cuda_target_the_device_is_cuda_and_streams_are_checked(monkeypatch):
    monkeypatch.setattr(_runtime, "target", lambda: "cuda")
    device = cuda.to_device(np.zeros(2))
    assert device.__dlpack_device__() == (_interop.KDL_CUDA, 0)
    with pytest.raises(ValueError, match="stream must be None, -1 or a stream handle other than 0"):
        device.__dlpack__(stream=0)
    capsule = device.__dlpack__(stream=-1)
    assert _capsule_is_valid(capsule, b"dltensor")


# On the CUDA target, against the stand-in driver (test_gpu_path.py): the
# host code counts the stand-in's cuStreamSynchronize calls of the array's
# stream around each export.
STREAM_WAITS = """
import os
from kiln.cuda.devicearray import as_device_array

def waits(handle):
    with open(os.environ["KILN_STAND_IN_LOG"]) as log:
        return sum(1 for line in log if json.loads(line)["call"] == "cuStreamSynchronize"
                   and json.loads(line)["hStream"] == handle)

stream = cuda.stream()
array = cuda.to_device(np.arange(4.0), stream=stream)
handle = int(stream.handle)
facts["device"] = list(array.__dlpack_device__())
counts = [waits(handle)]
for consumer in (2, -1, handle):
    capsule = array.__dlpack__(stream=consumer)
    counts.append(waits(handle))
facts["waits"] = [after - before for before, after in zip(counts, counts[1:])]
facts["in place"] = as_device_array(capsule, 0).device_pointer == array.device_pointer
"""


def test_a_consumer_on_another_stream_waits_for_the_arrays_stream(build_module, tmp_path):
    facts, _ = run_ok(build_module, tmp_path, None, None, STREAM_WAITS)
    assert facts["device"] == [_interop.KDL_CUDA, 0], "a GPU array's DLPack device is kDLCUDA"
    assert facts["waits"] == [1, 0, 0], (
        "the array's stream is waited for by a consumer on another stream (2), not with stream=-1 "
        f"nor by a consumer on the array's own stream; waits per export: {facts['waits']}")
    assert facts["in place"], "the capsule of a GPU array is its memory, not a copy"
