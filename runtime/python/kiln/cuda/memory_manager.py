"""External memory management: Numba's EMM plugin interface, for packages
that hand device allocation to another allocator (RMM, CuPy's pool).

`set_memory_manager(Plugin)` takes a class written against Numba's
interface (`BaseCUDAMemoryManager`, `HostOnlyCUDAMemoryManager`), and on a
GPU every device allocation Kiln makes (`device_array`, `to_device`,
`current_context().memalloc`) then comes from the plugin's `memalloc`: the
array keeps the plugin's `MemoryPointer` alive and the plugin frees the
memory when it is collected. Pinned and mapped host memory stays Kiln's own,
as it does for Numba's host-only plugins.

On the CPU engine device memory is host memory, which no GPU allocator can
provide: a plugin is accepted, so that a package that installs one at import
still imports, and allocations keep coming from the host (one RuntimeWarning
says so).
"""

import contextlib
import warnings
from abc import ABCMeta, abstractmethod

from kiln import _runtime

from . import memory_pointers
from .memory_pointers import allocate_host, pin

__all__ = ["BaseCUDAMemoryManager", "GetIpcHandleMixin", "HostOnlyCUDAMemoryManager", "set_memory_manager"]

# The version of Numba's EMM plugin interface Kiln implements.
SUPPORTED_INTERFACE_VERSION = 1

class BaseCUDAMemoryManager(metaclass=ABCMeta):
    """Numba's interface for External Memory Management (EMM) plugins."""

    def __init__(self, *args, **kwargs):
        if "context" not in kwargs:
            raise RuntimeError("Memory manager requires a context")
        self.context = kwargs.pop("context")

    @abstractmethod
    def memalloc(self, size):
        """A MemoryPointer that owns `size` bytes of device memory."""

    @abstractmethod
    def memhostalloc(self, size, mapped, portable, wc):
        """A MappedMemory or PinnedMemory that owns `size` bytes of host memory."""

    @abstractmethod
    def mempin(self, owner, pointer, size, mapped):
        """Host memory `owner` allocated, pinned."""

    @abstractmethod
    def initialize(self):
        """Prepares the plugin for use."""

    @abstractmethod
    def get_ipc_handle(self, memory):
        """An IpcHandle of a device allocation."""

    @abstractmethod
    def get_memory_info(self):
        """(free, total) bytes of device memory, as a MemoryInfo."""

    @abstractmethod
    def reset(self):
        """Frees everything the plugin allocated."""

    @abstractmethod
    def defer_cleanup(self):
        """A context manager during which nothing is freed."""

    @property
    @abstractmethod
    def interface_version(self):
        """1, the EMM interface version the plugin implements."""


class HostOnlyCUDAMemoryManager(BaseCUDAMemoryManager):
    """A base for plugins that allocate device memory only: host memory
    (pinned, mapped) stays Kiln's own."""

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        return allocate_host(self.context, size, mapped)

    def mempin(self, owner, pointer, size, mapped=False):
        return pin(self.context, owner, pointer, size, mapped)

    def reset(self):
        """Nothing to free: Kiln's host allocations belong to their arrays."""

    @contextlib.contextmanager
    def defer_cleanup(self):
        yield


class GetIpcHandleMixin:
    """Numba's default get_ipc_handle for plugins: the driver's handle of
    the allocation that holds `memory`."""

    def get_ipc_handle(self, memory):
        return memory_pointers.ipc_handle_of(memory.device_pointer.value, memory.size, memory,
                                             self.context.device.get_device_identity())


_plugin_class = None
_plugin = None


def set_memory_manager(mm_plugin):
    """Makes `mm_plugin` (a BaseCUDAMemoryManager subclass) allocate device
    memory from now on. RuntimeError if it implements another interface
    version than 1."""
    global _plugin_class, _plugin
    version = mm_plugin(context=None).interface_version
    if version != SUPPORTED_INTERFACE_VERSION:
        raise RuntimeError(f"EMM Plugin interface has version {version} - version "
                           f"{SUPPORTED_INTERFACE_VERSION} required")
    _plugin_class, _plugin = mm_plugin, None
    if _runtime.target() == "cpu":
        warnings.warn(f"kiln: {mm_plugin.__name__} allocates GPU memory; on the CPU engine device "
                      "memory is host memory, so allocations keep coming from the host",
                      RuntimeWarning, stacklevel=2)


def active_plugin(context):
    """The plugin instance allocating device memory, initialized at first
    use; None where Kiln allocates (no plugin, or the CPU engine)."""
    global _plugin
    if _plugin_class is None or _runtime.target() == "cpu":
        return None
    if _plugin is None:
        plugin = _plugin_class(context=context)
        plugin.initialize()
        _plugin = plugin
    return _plugin


def plugin_allocation(context, nbytes):
    """`nbytes` of device memory from the plugin of `context`, as its
    MemoryPointer; None where Kiln allocates."""
    if _plugin_class is None:
        return None
    plugin = active_plugin(context)
    return plugin.memalloc(nbytes) if plugin is not None else None


def reset_plugin():
    """Forgets the plugin instance (after `cuda.close()`); the class stays
    set, and the next allocation makes a new instance."""
    global _plugin
    if _plugin is not None:
        _plugin.reset()
    _plugin = None
