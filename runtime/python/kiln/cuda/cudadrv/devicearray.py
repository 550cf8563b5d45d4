"""`numba.cuda.cudadrv.devicearray`: the device array classes."""

from ..devicearray import DeviceNDArray, ManagedNDArray, MappedNDArray

# Numba's base of its device array classes; Kiln has one class.
DeviceNDArrayBase = DeviceNDArray

__all__ = ["DeviceNDArray", "DeviceNDArrayBase", "ManagedNDArray", "MappedNDArray", "is_cuda_ndarray"]


def is_cuda_ndarray(obj):
    """Whether `obj` is a device array of Numba's kind (Kiln's)."""
    return getattr(obj, "__cuda_ndarray__", False) or isinstance(obj, DeviceNDArray)
