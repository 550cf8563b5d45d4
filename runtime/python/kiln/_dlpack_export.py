"""DLPack export: kiln.cuda's device arrays as `__dlpack__` capsules.

`export(pointer, shape, strides, dtype, device, owner, versioned)` gives a
PyCapsule that another library's `from_dlpack` consumes without a copy:
"dltensor" (a DLManagedTensor) or, for a consumer that asks for DLPack 1.0
or later, "dltensor_versioned" (a DLManagedTensorVersioned). The tensor
and its shape and strides live in this module's table until the consumer
calls the deleter, or until the capsule is collected unconsumed (its
destructor calls the deleter then); the table holds `owner`, the device
array, too, so its memory outlives every view made from it.

The deleter and the destructor are ctypes callbacks: a consumer may call
the deleter from any thread, and PYFUNCTYPE takes the GIL for it.
"""

import ctypes
import threading

from kiln._interop import _DELETER, _DL_KINDS, _DLManagedTensor, _DLManagedTensorVersioned, _DLPackVersion

__all__ = ["export", "exported_count", "DLPACK_VERSION"]

# The newest DLPack this exporter writes (the versioned layout).
DLPACK_VERSION = (1, 0)

# NumPy kind -> DLDataTypeCode: the import side's table, turned around.
_DL_CODES = {kind: code for code, kind in _DL_KINDS.items()}

_NAME = ctypes.create_string_buffer(b"dltensor")
_VERSIONED_NAME = ctypes.create_string_buffer(b"dltensor_versioned")

_CAPSULE_DESTRUCTOR = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, _CAPSULE_DESTRUCTOR]
# The destructor gets a capsule whose references are gone: it must not
# become a Python object again, so these take it as a bare pointer.
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))

# Address of a managed tensor -> what must live until the consumer lets it
# go: the tensor, its shape and strides arrays, and the device array.
_exported = {}
_exported_lock = threading.Lock()


@_DELETER
def _delete(address):
    with _exported_lock:
        _exported.pop(address, None)


@_CAPSULE_DESTRUCTOR
def _destroy_unconsumed(capsule):
    # A consumer renames the capsule "used_dltensor[_versioned]" and calls
    # the deleter itself; a capsule still named as made was never consumed.
    for name in (_NAME, _VERSIONED_NAME):
        if _capsule_is_valid(capsule, name.value):
            _delete(_capsule_pointer(capsule, name.value))
            return


_DELETER_ADDRESS = ctypes.cast(_delete, ctypes.c_void_p).value


def _dl_dtype(dtype):
    code = _DL_CODES.get(dtype.kind)
    if code is None or dtype.fields is not None or dtype.subdtype is not None:
        raise BufferError(f"DLPack has no element type for {dtype}: only booleans, integers, floats and "
                          "complex numbers can be exported")
    return code, dtype.itemsize * 8


# DLManagedTensorVersioned flags
_IS_COPIED = 1 << 1


def export(pointer, shape, strides, dtype, device, owner, versioned, copied=False):
    """A DLPack capsule viewing `pointer` (shape and byte strides of
    `dtype` elements on `device`, a (DLDeviceType, id) pair) that keeps
    `owner` alive until its consumer lets it go; `copied` says, in the
    versioned layout, that the memory is a copy made for this export."""
    code, bits = _dl_dtype(dtype)
    itemsize = dtype.itemsize
    if any(stride % itemsize for stride in strides):
        raise BufferError(f"DLPack strides count elements: strides {tuple(strides)} are not multiples of "
                          f"the element size {itemsize}")
    ndim = len(shape)
    shape_array = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_array = (ctypes.c_int64 * max(ndim, 1))(*(stride // itemsize for stride in strides))
    if versioned:
        managed = _DLManagedTensorVersioned()
        managed.version = _DLPackVersion(*DLPACK_VERSION)
        managed.flags = _IS_COPIED if copied else 0
    else:
        managed = _DLManagedTensor()
    tensor = managed.dl_tensor
    tensor.data = pointer or None
    tensor.device.device_type, tensor.device.device_id = device
    tensor.ndim = ndim
    tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = code, bits, 1
    tensor.shape = ctypes.cast(shape_array, ctypes.POINTER(ctypes.c_int64))
    tensor.strides = ctypes.cast(strides_array, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0
    managed.manager_ctx = None
    managed.deleter = _DELETER_ADDRESS
    address = ctypes.addressof(managed)
    with _exported_lock:
        _exported[address] = (managed, shape_array, strides_array, owner)
    name = _VERSIONED_NAME if versioned else _NAME
    return _capsule_new(address, ctypes.addressof(name), _destroy_unconsumed)


def exported_count():
    """How many exported tensors no consumer has let go of yet."""
    with _exported_lock:
        return len(_exported)
