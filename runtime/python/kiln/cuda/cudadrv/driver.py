"""`numba.cuda.cudadrv.driver`: the device, its context, memory and the
exceptions, as packages import them from here. `driver` stands for Numba's
driver object: whether a device is there, how many, which version."""

from kiln import _runtime

from ..context import Context
from ..context import Device, get_current_device
from ..device import cuda_error
from ..errors import CudaDriverError, CudaSupportError
from ..memory_manager import BaseCUDAMemoryManager, GetIpcHandleMixin, HostOnlyCUDAMemoryManager, set_memory_manager
from ..memory_pointers import IpcHandle, MappedMemory, MemoryInfo, MemoryPointer, PinnedMemory

__all__ = [
    "BaseCUDAMemoryManager", "Context", "CudaAPIError", "CudaDriverError", "CudaSupportError", "Device",
    "GetIpcHandleMixin", "HostOnlyCUDAMemoryManager", "IpcHandle", "MappedMemory", "MemoryInfo",
    "MemoryPointer", "PinnedMemory", "driver", "set_memory_manager",
]

# What a failed driver call raises: kiln.CudaError, with the driver's error code and name.
CudaAPIError = _runtime.CudaError


class Driver:
    """The driver as numba.cuda's `driver` object shows it."""

    @property
    def is_available(self):
        try:
            _runtime.target()
        except Exception:  # noqa: BLE001 - a target that cannot start is no driver
            return False
        return True

    @property
    def initialization_error(self):
        return cuda_error()

    def get_device_count(self):
        return 1 if self.is_available else 0

    def get_device(self, devnum=0):
        device = get_current_device()
        if devnum != device.id:
            raise ValueError(f"Kiln runs on device {device.id} only; there is no device {devnum}")
        return device

    def get_version(self):
        """(major, minor) of the CUDA version the driver supports; (-1, -1) on the CPU engine."""
        return _runtime.driver_version() or (-1, -1)


driver = Driver()
