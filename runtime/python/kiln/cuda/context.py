"""Devices and contexts as numba.cuda shows them: `get_current_device()`,
`cuda.gpus`, `current_context()`, `require_context`, `close()`.

Kiln's runtime runs kernels on one device, for the whole process: GPU 0
through its primary context, or the CPU engine, which is then device 0 (as
the simulator's fake device is). So there is one `Context`, and `gpus` lists
one device. Kiln frees device memory when the array owning it is collected,
so there are never deallocations pending: `deallocations.clear()` has
nothing to do, and `reset()` and `close()` wait for the device instead of
freeing memory that arrays still own.
"""

import contextlib
import functools

from kiln import _runtime

from . import memory_manager, memory_pointers
from .memory_pointers import MemoryInfo, MemoryPointer

__all__ = ["Context", "Device", "close", "current_context", "get_current_device", "gpus", "list_devices",
           "require_context", "select_device"]

# Limits every device Kiln builds for has (compute capability 7.0 and up),
# by the names Numba gives device attributes (CU_DEVICE_ATTRIBUTE_*).
ARCHITECTURE_LIMITS = {
    "MAX_BLOCK_DIM_X": 1024,
    "MAX_BLOCK_DIM_Y": 1024,
    "MAX_BLOCK_DIM_Z": 64,
    "MAX_GRID_DIM_X": 2**31 - 1,
    "MAX_GRID_DIM_Y": 65535,
    "MAX_GRID_DIM_Z": 65535,
    "MAX_REGISTERS_PER_BLOCK": 65536,
    "TOTAL_CONSTANT_MEMORY": 65536,
    "UNIFIED_ADDRESSING": 1,
    "CONCURRENT_KERNELS": 1,
}


class Device:
    """What host code sees of the device (`numba.cuda.cudadrv.driver.Device`).
    Its attributes in capitals are the device attributes Numba reads with
    cuDeviceGetAttribute, as far as Kiln's runtime knows them."""

    def __init__(self, info):
        self._info = dict(info)
        self.id = int(info.get("ordinal", 0))
        self.name = info.get("name", "")
        self.compute_capability = tuple(info.get("compute_capability", (0, 0)))
        self.uuid = info.get("uuid", "")
        self.total_memory = int(info.get("total_memory", 0))
        self.COMPUTE_CAPABILITY_MAJOR, self.COMPUTE_CAPABILITY_MINOR = self.compute_capability
        self.MULTIPROCESSOR_COUNT = int(info.get("multiprocessor_count", 1))
        self.WARP_SIZE = int(info.get("warp_size", 32))
        self.MAX_THREADS_PER_BLOCK = int(info.get("max_threads_per_block", 1024))
        self.MAX_SHARED_MEMORY_PER_BLOCK = int(info.get("max_shared_memory_per_block", 48 * 1024))
        self.target = _runtime.target()
        if self.target == "cpu":
            self.KERNEL_EXEC_TIMEOUT = 0
            self.PCI_DOMAIN_ID = self.PCI_BUS_ID = self.PCI_DEVICE_ID = 0

    def __getattr__(self, name):
        if name in ARCHITECTURE_LIMITS:
            return ARCHITECTURE_LIMITS[name]
        if name.isupper():
            raise AttributeError(f"Kiln's runtime does not read the device attribute {name}: it knows "
                                 f"{', '.join(sorted(self._known_attributes()))}")
        raise AttributeError(f"'Device' object has no attribute {name!r}")

    def _known_attributes(self):
        return [key for key in vars(self) if key.isupper()] + list(ARCHITECTURE_LIMITS)

    @property
    def supports_float16(self):
        return True

    @property
    def supports_bfloat16(self):
        """GPUs of compute capability 8.0 and up; the CPU engine computes
        bfloat16 in float32 and rounds, as older GPUs' bindings do."""
        return self.target == "cpu" or self.compute_capability >= (8, 0)

    @property
    def supports_fp8(self):
        """GPUs of compute capability 8.9 and up, as numba-cuda says; the CPU
        engine, whose FP8 conversions are cuda_fp8.h's portable ones."""
        return self.target == "cpu" or self.compute_capability >= (8, 9)

    def get_device_identity(self):
        """What tells this device from others across processes (the
        source_info of an IpcHandle): its UUID."""
        return {"uuid": self.uuid}

    def get_primary_context(self):
        return current_context()

    def release_primary_context(self):
        """The runtime keeps the primary context for the process."""

    def reset(self):
        current_context().reset()

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name}'>"


@functools.cache
def get_current_device():
    """The device kernels run on (on the CPU target, the CPU engine)."""
    return Device(_runtime.device_info())


def select_device(device_id):
    """Kiln uses one device (ordinal 0, or the CPU engine)."""
    device = get_current_device()
    if device_id != device.id:
        raise ValueError(f"Kiln runs on device {device.id} only; cannot select device {device_id}")
    return device


def list_devices():
    """The devices kernels can run on: `cuda.gpus`."""
    return gpus


class PendingDeallocations:
    """Numba's queue of frees it has put off; Kiln's is always empty."""

    def __init__(self):
        self._disabled = 0

    def clear(self):
        """Flushes the queue: there is nothing in it."""

    @contextlib.contextmanager
    def disable(self):
        self._disabled += 1
        try:
            yield
        finally:
            self._disabled -= 1

    @property
    def is_disabled(self):
        return self._disabled > 0

    def __len__(self):
        return 0


class Context:
    """The device's context: memory, memory information, synchronization."""

    def __init__(self, device):
        self.device = device
        self.deallocations = PendingDeallocations()

    @property
    def handle(self):
        return None

    def __repr__(self):
        return f"<CUDA context of device {self.device.id}>"

    def get_memory_info(self):
        """(free, total) bytes of device memory (host memory on the CPU engine)."""
        plugin = memory_manager.active_plugin(self)
        if plugin is not None:
            return plugin.get_memory_info()
        return MemoryInfo(*_runtime.memory_info())

    def memalloc(self, bytesize):
        """`bytesize` bytes of device memory, as a MemoryPointer."""
        plugin = memory_manager.active_plugin(self)
        if plugin is not None:
            return plugin.memalloc(bytesize)
        buffer = _runtime.DeviceBuffer(bytesize)
        return MemoryPointer(self, buffer.pointer, bytesize, owner=buffer)

    def memallocmanaged(self, bytesize, attach_global=True):
        """`bytesize` bytes of managed memory, which the host can read too."""
        buffer = _runtime.DeviceBuffer(bytesize, managed=True)
        return MemoryPointer(self, buffer.pointer, bytesize, owner=buffer)

    def memhostalloc(self, bytesize, mapped=False, portable=False, wc=False):
        """Page-locked host memory (mapped into the device with `mapped`)."""
        return memory_pointers.allocate_host(self, bytesize, mapped)

    def mempin(self, owner, pointer, size, mapped=False):
        return memory_pointers.pin(self, owner, pointer, size, mapped)

    def get_ipc_handle(self, memory):
        """The IpcHandle another process opens `memory` (a MemoryPointer) with."""
        plugin = memory_manager.active_plugin(self)
        if plugin is not None:
            return plugin.get_ipc_handle(memory)
        return memory_pointers.ipc_handle_of(memory.device_pointer.value, memory.size, memory,
                                             self.device.get_device_identity())

    def defer_cleanup(self):
        plugin = memory_manager.active_plugin(self)
        return plugin.defer_cleanup() if plugin is not None else contextlib.nullcontext()

    def synchronize(self):
        _runtime.synchronize()

    def reset(self):
        """Waits for the device; a memory manager plugin frees what it holds."""
        _runtime.synchronize()
        memory_manager.reset_plugin()

    def push(self):
        """One context, always current: nothing to push."""

    def pop(self):
        """One context, always current: nothing to pop."""

    def create_stream(self):
        from .streams import stream

        return stream()

    def create_event(self, timing=True):
        from .streams import event

        return event(timing)


_context = None
_closed = False


def current_context(devnum=None):
    """The context of the device kernels run on (device 0)."""
    global _context, _closed
    device = get_current_device()
    if devnum not in (None, device.id):
        raise ValueError(f"Kiln runs on device {device.id} only; there is no context of device {devnum}")
    if _context is None:
        _context = Context(device)
    _closed = False
    return _context


def require_context(function):
    """Decorates `function` to run with the device's context ready."""

    @functools.wraps(function)
    def with_context(*args, **kwargs):
        current_context()
        return function(*args, **kwargs)

    return with_context


def close():
    """Waits for the device and lets a memory manager plugin free its
    memory. `gpus.current` is None until the device is used again."""
    global _closed
    if _context is not None:
        _context.reset()
    _closed = True


class DeviceContextManager:
    """`cuda.gpus[i]`: the device, and `with cuda.gpus[i]:` runs the block on it."""

    def __init__(self, device):
        self._device = device

    def __getattr__(self, name):
        return getattr(self._device, name)

    def get_primary_context(self):
        return current_context()

    def __enter__(self):
        current_context()

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    def __str__(self):
        return f"<Managed Device {self._device.id}>"

    __repr__ = __str__


class DeviceList:
    """`cuda.gpus`: the devices kernels can run on (one)."""

    @functools.cached_property
    def _devices(self):
        return (DeviceContextManager(get_current_device()),)

    def __getitem__(self, index):
        if not isinstance(index, slice):
            index = int(index)
            if not -len(self) <= index < len(self):
                raise IndexError(f"Kiln runs kernels on one device (device 0: "
                                 f"{self._devices[0].name}); there is no device {index}")
        return self._devices[index]

    def __iter__(self):
        return iter(self._devices)

    def __len__(self):
        return len(self._devices)

    def __str__(self):
        return ", ".join(str(device) for device in self._devices)

    @property
    def current(self):
        """The active device, or None after `cuda.close()`."""
        return None if _closed else self._devices[0]


gpus = DeviceList()
