"""Memory as Numba's driver layer hands it out: `MemoryPointer` (device
memory and what frees it), `MappedMemory`, `PinnedMemory`, `IpcHandle`,
`MemoryInfo`. Memory manager plugins return them; so do the context's
`memalloc` and `memhostalloc`."""

import collections
import ctypes
import weakref

from kiln import _runtime

__all__ = ["IpcHandle", "MappedMemory", "MemoryInfo", "MemoryPointer", "PinnedMemory"]

MemoryInfo = collections.namedtuple("MemoryInfo", "free, total")

class DevicePointer(ctypes.c_uint64):
    """An address as Numba's pointers hold one: `.value` (ctypes) and
    `int(pointer)` (the CUDA Python binding's) both give it."""

    def __int__(self):
        return self.value or 0

    __index__ = __int__


def _address(pointer):
    """An address as an int, from an int or a ctypes pointer or integer."""
    value = getattr(pointer, "value", pointer)
    return int(value or 0)


class MemoryPointer:
    """Device memory an allocator owns: its address, its size, and what
    frees it (`finalizer`, called once, when the pointer is collected or
    `free()` is called)."""

    __cuda_memory__ = True

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        self.device_pointer = DevicePointer(_address(pointer))
        self.size = size
        self._cuda_memsize_ = size
        self.is_managed = finalizer is not None
        self.handle = self.device_pointer
        self._owner = owner
        if finalizer is not None:
            self._finalizer = weakref.finalize(self, finalizer)

    @property
    def owner(self):
        return self if self._owner is None else self._owner

    @property
    def device_pointer_value(self):
        return self.device_pointer.value or None

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_size_t(self.device_pointer.value or 0)

    def own(self):
        return self

    def free(self):
        """Frees the memory now (once)."""
        if self.is_managed:
            if not self._finalizer.alive:
                raise RuntimeError("Freeing dead memory")
            self._finalizer()

    def memset(self, byte, count=None, stream=0):
        from .streams import stream_handle

        count = self.size if count is None else count
        _runtime.fill(self.device_pointer.value, byte, count, stream_handle(stream))

    def view(self, start, stop=None):
        size = self.size - start if stop is None else stop - start
        if size < 0:
            raise RuntimeError("size cannot be negative")
        if not self.device_pointer.value:
            if size:
                raise RuntimeError("non-empty slice into empty slice")
            return self
        return MemoryPointer(self.context, self.device_pointer.value + start, size, owner=self.owner)


class MappedMemory(MemoryPointer):
    """Host memory mapped into the device: `host_pointer` and
    `device_pointer`, the same address (64-bit CUDA maps host memory at
    its host address: unified addressing)."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        super().__init__(context, pointer, size, owner=owner, finalizer=finalizer)
        self.host_pointer = DevicePointer(_address(pointer))
        self.handle = self.host_pointer


class PinnedMemory:
    """Page-locked host memory: `host_pointer` and `size`."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        self.host_pointer = DevicePointer(_address(pointer))
        self.handle = self.host_pointer
        self.size = size
        self._owner = owner
        self.is_managed = finalizer is not None
        if finalizer is not None:
            self._finalizer = weakref.finalize(self, finalizer)

    @property
    def owner(self):
        return self if self._owner is None else self._owner

    def own(self):
        return self


class IpcHandle:
    """Device memory as another process opens it (CUDA IPC), as Numba's:
    made in the exporting process by `get_ipc_handle` (`base` then holds
    its memory alive), pickled to another process (`base` is None there),
    and opened there with `open` or `open_array`, then `close`d. `handle`
    is the driver's 64-byte handle of the whole allocation; `offset` says
    where in it the shared memory starts, and `size` how long it is."""

    # The arrays open_array makes: kiln.cuda.devicearray's DeviceNDArray,
    # which sets this when it is imported (it sits above this module).
    array_type = None

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base
        self.handle = bytes(handle)
        self.size = size
        self.source_info = source_info
        self.offset = offset
        self._opened = None

    def __reduce__(self):
        return (type(self)._rebuild, (self.handle, self.size, self.source_info, self.offset))

    @classmethod
    def _rebuild(cls, handle, size, source_info, offset):
        return cls(None, handle, size, source_info, offset)

    def open(self, context):
        """A MemoryPointer to the shared memory, in this process."""
        if self.base is not None:
            raise ValueError("opening IpcHandle from original process: the memory is this process's "
                             "already; use the array or memory the handle was made from")
        if self._opened is not None:
            raise ValueError("IpcHandle is already opened")
        here = context.device.get_device_identity()
        if self.source_info is not None and self.source_info != here:
            raise ValueError(f"this IPC handle is of memory on {self.source_info}, not on this "
                             f"process's device {here}; Kiln opens handles of its own device only")
        self._opened = _runtime.ipc_open(self.handle)
        return MemoryPointer(context, self._opened + self.offset, self.size, owner=self)

    def open_array(self, context, shape, dtype, strides=None):
        """A DeviceNDArray of `shape` and `dtype` (C-contiguous without
        `strides`) over the shared memory, in this process."""
        memory = self.open(context)
        return self.array_type.over_memory(memory, shape, dtype, strides)

    def close(self):
        """Lets go of the memory `open` opened."""
        if self._opened is None:
            raise ValueError("IpcHandle not opened")
        opened, self._opened = self._opened, None
        _runtime.ipc_close(opened)


def ipc_handle_of(address, size, keep_alive, source_info):
    """The IpcHandle of `size` bytes of device memory at `address` on the
    device `source_info` identifies; `keep_alive` keeps the memory alive in
    this process."""
    if not address:
        raise ValueError("empty device memory (size 0) has no IPC handle: there is nothing to share")
    handle, base, _ = _runtime.ipc_export(address)
    return IpcHandle(keep_alive, handle, size, source_info, offset=address - base)


def allocate_host(context, size, mapped):
    """`size` bytes of page-locked host memory from Kiln's runtime."""
    buffer = _runtime.HostBuffer(size, mapped=mapped)
    return (MappedMemory if mapped else PinnedMemory)(context, buffer.pointer, size, owner=buffer)


def pin(context, owner, pointer, size, mapped):
    """Host memory `owner` allocated, as pinned memory. Kiln's copies read
    pageable memory as they read pinned memory, so the region is used as
    it is; only the CPU engine, whose device memory is host memory, can
    also see it from kernels."""
    if mapped and not _runtime.shares_host_memory():
        raise NotImplementedError("Kiln's runtime cannot map host memory it did not allocate into the GPU: "
                                  "allocate it with cuda.mapped_array instead")
    return (MappedMemory if mapped else PinnedMemory)(context, pointer, size, owner=owner)
