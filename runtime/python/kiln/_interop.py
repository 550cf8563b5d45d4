"""Zero-copy views of other libraries' arrays: CUDA Array Interface and DLPack.

`foreign_array(obj, stream_handle)` describes the device memory of an
object that exports either interface as a ForeignArray, or gives None if
`obj` exports neither; kiln.cuda's device arrays make their views of it
(`kiln.cuda.devicearray.as_device_array`, which dispatch calls for an
argument it does not know). The record's `owner` keeps `obj` alive.

- `__cuda_array_interface__` (versions 0-3): shape, typestr (descr for
  structured types), data, strides (None: C-contiguous), mask (must be
  None), stream. As Numba does by default, a `stream` in the interface is
  synchronized before the array is used (1 is the legacy default stream,
  2 the per-thread default stream; 0 is not allowed by the protocol).
- DLPack: a "dltensor" capsule, or an object with `__dlpack__` and
  `__dlpack_device__`. The capsule is renamed "used_dltensor" and its
  deleter runs when the view's owner is collected. CUDA tensors are used on
  the CUDA target; CPU tensors only on the CPU target, where device memory
  is host memory (on the CUDA target a TypeError says to pass the NumPy
  array itself, which dispatch copies to the device).
"""

import ctypes
from typing import NamedTuple

import numpy as np

from kiln import _runtime
from kiln._strides import contiguous_strides

__all__ = ["ForeignArray", "foreign_array", "is_dlpack", "from_cuda_array_interface", "from_dlpack"]


class ForeignArray(NamedTuple):
    """Another library's device array: where its elements are, how they
    are laid out, what keeps them alive, and the stream they are used on."""
    shape: tuple
    strides: tuple
    dtype: np.dtype
    pointer: int
    owner: object
    stream: int = 0

# DLDeviceType
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
_DEVICE_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan", 8: "kDLMetal",
                 9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev", 13: "kDLCUDAManaged",
                 14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon"}


def _target():
    return _runtime.target()


# ---------------------------------------------------------------------------
# CUDA Array Interface


def _dtype_from_interface(desc):
    typestr = desc["typestr"]
    descr = desc.get("descr")
    dtype = np.dtype(typestr)
    if descr and dtype.kind == "V" and not (len(descr) == 1 and descr[0][0] == ""):
        dtype = np.dtype([tuple(field) for field in descr])
        if dtype.itemsize != np.dtype(typestr).itemsize:
            raise ValueError(
                f"__cuda_array_interface__: descr {descr!r} does not match typestr {typestr!r}"
            )
    return dtype


def _synchronize_stream(handle):
    _runtime.Stream.wrap(handle).synchronize()


def from_cuda_array_interface(desc, owner=None, sync=True, stream_handle=0):
    """The ForeignArray `desc` (a `__cuda_array_interface__` dict) describes."""
    if not isinstance(desc, dict):
        raise TypeError(f"__cuda_array_interface__ must be a dict, not {type(desc).__name__}")
    try:
        version = desc.get("version", 0)
        shape = tuple(int(s) for s in desc["shape"])
        data = desc["data"]
        dtype = _dtype_from_interface(desc)
    except KeyError as missing:
        raise ValueError(f"__cuda_array_interface__ is missing {missing}") from None
    if version >= 1 and desc.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported")
    if data is None:
        pointer = 0
    else:
        pointer = int(data[0])
    strides = desc.get("strides")
    if strides is None:
        strides = contiguous_strides(shape, dtype.itemsize)
    else:
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(shape):
            raise ValueError("__cuda_array_interface__: strides and shape differ in length")
    size = 1
    for extent in shape:
        size *= extent
    if pointer == 0 and size:
        raise ValueError("__cuda_array_interface__: a null data pointer for a non-empty array")
    array_stream = 0
    stream = desc.get("stream") if version >= 3 else None
    if stream is not None:
        if isinstance(stream, bool) or not isinstance(stream, int):
            raise TypeError(f"__cuda_array_interface__: stream must be an int or None, not {stream!r}")
        if stream == 0:
            raise ValueError(
                "__cuda_array_interface__: stream 0 is not allowed by the protocol "
                "(use 1 for the legacy default stream, 2 for the per-thread default stream)"
            )
        if sync:
            _synchronize_stream(stream)
        array_stream = stream
    return ForeignArray(shape, strides, dtype, pointer, owner, array_stream)


# ---------------------------------------------------------------------------
# DLPack


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# PYFUNCTYPE: call deleters holding the GIL (NumPy's takes it anyway).
_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", _DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_pythonapi = ctypes.pythonapi
_pythonapi.PyCapsule_IsValid.restype = ctypes.c_int
_pythonapi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_pythonapi.PyCapsule_SetName.restype = ctypes.c_int
_pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_void_p]

# PyCapsule_SetName keeps the pointer: these buffers live as long as the module.
_USED_NAME = ctypes.create_string_buffer(b"used_dltensor")
_USED_VERSIONED_NAME = ctypes.create_string_buffer(b"used_dltensor_versioned")

def _is_capsule(obj):
    return type(obj).__name__ == "PyCapsule"


def is_dlpack(obj):
    """True for a DLPack capsule or an object with `__dlpack__`."""
    return _is_capsule(obj) or (hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"))


# DLDataTypeCode -> NumPy kind
_DL_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


def _dtype_from_dl(dtype):
    if dtype.lanes != 1:
        raise TypeError(f"DLPack tensors with {dtype.lanes} lanes per element are not supported")
    kind = _DL_KINDS.get(dtype.code)
    if kind is None:
        names = {3: "opaque handle", 4: "bfloat16", 7: "float8"}
        raise TypeError(f"DLPack element type {names.get(dtype.code, dtype.code)} is not supported")
    if kind == "b":
        if dtype.bits != 8:
            raise TypeError(f"DLPack bool of {dtype.bits} bits is not supported")
        return np.dtype(np.bool_)
    return np.dtype(f"{kind}{dtype.bits // 8}")


class _DLPackOwner:
    """Keeps a consumed DLPack tensor alive; calls its deleter when collected."""

    __slots__ = ("_managed", "_deleter", "producer", "__weakref__")

    def __init__(self, managed, deleter, producer):
        self._managed = managed
        self._deleter = deleter
        self.producer = producer

    def __del__(self):
        deleter, self._deleter = self._deleter, None
        if deleter:
            _DELETER(deleter)(self._managed)


def _accepts_device(device_type):
    """None if this target can use memory of `device_type`, else the reason."""
    target = _target()
    name = _DEVICE_NAMES.get(device_type, str(device_type))
    if target == "cuda":
        if device_type in (KDL_CUDA, KDL_CUDA_MANAGED, KDL_CUDA_HOST):
            return None
        if device_type == KDL_CPU:
            return (
                "a DLPack tensor in host memory (kDLCPU) cannot be used as device memory on the CUDA "
                "target; pass the NumPy array itself (numpy.from_dlpack(x)) and Kiln copies it to the "
                "device, or copy it with kiln.cuda.to_device()"
            )
        return f"DLPack tensors on {name} devices cannot be used on the CUDA target"
    if device_type in (KDL_CPU, KDL_CUDA_HOST, KDL_CUDA_MANAGED):
        return None
    return (
        f"a DLPack tensor in {name} memory cannot be used on the CPU target, which runs kernels on host "
        "memory; copy it to the host first"
    )


def from_dlpack(obj, stream_handle=0):
    """The ForeignArray of a DLPack capsule or `__dlpack__` exporter."""
    producer = obj
    if not _is_capsule(obj):
        if not is_dlpack(obj):
            raise TypeError(
                f"{type(obj).__name__} is neither a DLPack capsule nor has __dlpack__ and __dlpack_device__"
            )
        device_type, _ = obj.__dlpack_device__()
        reason = _accepts_device(int(device_type))
        if reason:
            raise TypeError(reason)
        if int(device_type) in (KDL_CUDA, KDL_CUDA_MANAGED):
            # The consumer's stream: the exporter makes its data ready on it.
            capsule = obj.__dlpack__(stream=stream_handle if stream_handle else 1)
        else:
            capsule = obj.__dlpack__()
    else:
        capsule = obj
    if _pythonapi.PyCapsule_IsValid(capsule, b"dltensor"):
        pointer = _pythonapi.PyCapsule_GetPointer(capsule, b"dltensor")
        managed = _DLManagedTensor.from_address(pointer)
        readonly = False
        used_name = _USED_NAME
    elif _pythonapi.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        pointer = _pythonapi.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        managed = _DLManagedTensorVersioned.from_address(pointer)
        if managed.version.major > 1:
            raise TypeError(f"DLPack version {managed.version.major} tensors are not supported")
        readonly = bool(managed.flags & 1)
        used_name = _USED_VERSIONED_NAME
    elif _pythonapi.PyCapsule_IsValid(capsule, b"used_dltensor") or _pythonapi.PyCapsule_IsValid(
        capsule, b"used_dltensor_versioned"
    ):
        raise ValueError("this DLPack capsule was already consumed; a capsule can be used once")
    else:
        raise TypeError("not a DLPack capsule (expected a PyCapsule named 'dltensor')")
    tensor = managed.dl_tensor
    reason = _accepts_device(tensor.device.device_type)
    if reason:
        raise TypeError(reason)
    dtype = _dtype_from_dl(tensor.dtype)
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] * dtype.itemsize for i in range(ndim))
    else:
        strides = contiguous_strides(shape, dtype.itemsize)
    data = (tensor.data or 0) + tensor.byte_offset
    # From here on the tensor is ours: rename the capsule so that its
    # destructor leaves the deleter to us.
    if _pythonapi.PyCapsule_SetName(capsule, ctypes.addressof(used_name)) != 0:
        raise RuntimeError("could not mark the DLPack capsule as used")
    owner = _DLPackOwner(pointer, managed.deleter, producer)
    view = ForeignArray(shape, strides, dtype, data, owner, 0)
    del readonly  # device arrays are writable; a read-only tensor is the caller's to respect
    return view


# ---------------------------------------------------------------------------


def foreign_array(obj, stream_handle=0, sync=True):
    """The ForeignArray of `obj`, or None if it exports neither interface
    (or is a NumPy array, a host array dispatch handles itself)."""
    desc = getattr(obj, "__cuda_array_interface__", None)
    if desc is not None:
        return from_cuda_array_interface(desc, owner=obj, sync=sync, stream_handle=stream_handle)
    if is_dlpack(obj):
        if isinstance(obj, np.ndarray):
            return None
        return from_dlpack(obj, stream_handle)
    return None
