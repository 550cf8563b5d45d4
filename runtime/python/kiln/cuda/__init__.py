"""`numba.cuda` for Kiln: kernels and the host API. Code ports by changing
one import::

    from kiln import cuda             # was: from numba import cuda

    @cuda.jit
    def add_kernel(x, out):
        ...

    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(x)
    add_kernel[blocks, threads](d_x, d_out)
    out = d_out.copy_to_host()

In a module that runs as Python source, `cuda.jit` kernels (and
`cuda.reduce` reductions, `vectorize` ufuncs) are built on demand by Kiln's
compiler (kiln.dispatcher); a module built with `kiln build --module` holds
them precompiled. Every public name of numba.cuda is here, or raises an
AttributeError saying why Kiln has no such thing and what to use instead
(kiln.cuda.unavailable). Kernels run on one device: GPU 0, or, with no GPU
(or KILN_TARGET=cpu), Kiln's CPU engine, which is then device 0 and whose
"device" memory is host memory; asynchronous operations may complete
eagerly there.
"""

import importlib as _importlib
import importlib.util as _importlib_util

from . import random
from .context import Device, get_current_device, list_devices, select_device
from .device import (
    cuda_error,
    defer_cleanup,
    detect,
    is_available,
    is_bfloat16_supported,
    is_float16_supported,
    is_fp8_supported,
    is_supported_version,
    profile_start,
    profile_stop,
    profiling,
    synchronize,
)
from .devicearray import (
    DeviceNDArray,
    ManagedNDArray,
    MappedNDArray,
    as_cuda_array,
    device_array,
    device_array_like,
    from_cuda_array_interface,
    is_cuda_array,
    managed_array,
    mapped,
    mapped_array,
    mapped_array_like,
    open_ipc_array,
    pinned_array,
    pinned_array_like,
    to_device,
)
from .devicearray import _prepare as prepare_shape_strides_dtype
from .streams import (
    Event,
    Stream,
    default_stream,
    event,
    event_elapsed_time,
    external_stream,
    legacy_default_stream,
    per_thread_default_stream,
    stream,
)
# Names loaded at first use, by the module that defines them (and, failing
# those, the kernel language's: _kernel_language_name): what a built
# module's import needs is above, and importing kiln.cuda stays quick.
_LAZY_MODULES = {"args", "config", "cudadrv", "errors", "libdevice"}
_LAZY_NAMES = {
    **dict.fromkeys(["In", "InOut", "Out"], "args"),
    **dict.fromkeys(["close", "current_context", "gpus", "require_context"], "context"),
    **dict.fromkeys(["CudaSupportError", "KernelRuntimeError"], "errors"),
    **dict.fromkeys(["Archive", "CUSource", "Cubin", "Fatbin", "LinkableCode", "LTOIR", "Object", "PTXSource"],
                    "cudadrv.linkable_code"),
    "runtime": "cudadrv.runtime",
    **dict.fromkeys(["BaseCUDAMemoryManager", "GetIpcHandleMixin", "HostOnlyCUDAMemoryManager",
                     "set_memory_manager"], "memory_manager"),
    **dict.fromkeys(["IpcHandle", "MappedMemory", "MemoryInfo", "MemoryPointer", "PinnedMemory"],
                    "memory_pointers"),
    "driver": "cudadrv",
    "devices": "cudadrv",
    **dict.fromkeys(["jit", "reduce", "Reduce", "vectorize", "declare_device"], "kiln.decorators"),
}

# Whether Numba itself is installed beside Kiln (numba-cuda's flag of the same name).
HAS_NUMBA = _importlib_util.find_spec("numba") is not None
# The lowest compute capability of the architectures `kiln build` compiles for by default.
config_default_cc = (7, 5)
numba_cuda_default_ptx_cc = (7, 5)

__all__ = sorted({
    "Device", "DeviceNDArray", "Event", "HAS_NUMBA", "ManagedNDArray", "MappedNDArray", "Stream",
    "as_cuda_array", "config_default_cc", "cuda_error", "default_stream", "defer_cleanup", "detect",
    "device_array", "device_array_like", "event", "event_elapsed_time", "external_stream",
    "from_cuda_array_interface", "get_current_device", "is_available", "is_bfloat16_supported",
    "is_cuda_array", "is_float16_supported", "is_fp8_supported", "is_supported_version",
    "legacy_default_stream", "list_devices", "managed_array", "mapped", "mapped_array",
    "mapped_array_like", "numba_cuda_default_ptx_cc", "open_ipc_array", "per_thread_default_stream",
    "pinned", "pinned_array", "pinned_array_like", "prepare_shape_strides_dtype", "profile_start",
    "profile_stop", "profiling", "random", "select_device", "stream", "synchronize", "to_device",
    *_LAZY_MODULES, *_LAZY_NAMES,
})


import contextlib as _contextlib


@_contextlib.contextmanager
def pinned(*arrays):
    """Numba pins the arrays for the block; Kiln copies from pageable memory
    just as well, so this is a no-op context manager."""
    yield


def __getattr__(name):
    if name in _LAZY_MODULES:
        value = _importlib.import_module(f"{__name__}.{name}")
    elif name in _LAZY_NAMES:
        where = _LAZY_NAMES[name]
        module = _importlib.import_module(where if where.startswith("kiln.") else f"{__name__}.{where}")
        value = getattr(module, name.lower() if name == "Reduce" else name)
    else:
        value = _kernel_language_name(name)
    globals()[name] = value
    return value


def _kernel_language_name(name):
    """`name` of the kernel language (threadIdx, syncthreads, ...) or its
    types (float32, ...), whose modules load at the first such name; else
    the AttributeError saying why kiln.cuda has no such name."""
    for where in ("kernel_language", "numba_types"):
        module = _importlib.import_module(f"{__name__}.{where}")
        if name in module.__all__:
            return getattr(module, name)
    from .unavailable import explanation

    raise AttributeError(explanation(name) or f"module 'kiln.cuda' has no attribute {name!r}")
