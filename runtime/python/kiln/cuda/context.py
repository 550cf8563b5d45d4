"""Devices and contexts as numba.cuda shows them: `cuda.gpus`,
`current_context()`, `require_context`, `close()`.

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
from .device import get_current_device, synchronize
from .memory_manager import IPC_UNSUPPORTED
from .memory_pointers import MemoryInfo, MemoryPointer

__all__ = ["Context", "close", "current_context", "gpus", "require_context"]


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
        raise NotImplementedError(IPC_UNSUPPORTED)

    def defer_cleanup(self):
        plugin = memory_manager.active_plugin(self)
        return plugin.defer_cleanup() if plugin is not None else contextlib.nullcontext()

    def synchronize(self):
        synchronize()

    def reset(self):
        """Waits for the device; a memory manager plugin frees what it holds."""
        synchronize()
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
