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

In a module that runs as Python source, `cuda.jit` kernels are specialized
on demand by Kiln's compiler (kiln.dispatcher); a module built with `kiln
build --module` holds its kernels precompiled. Ufuncs and reductions come
from built modules, so `cuda.reduce` and `vectorize` are not here. On the
CPU target (no GPU, or KILN_TARGET=cpu) "device" memory is host memory and
everything works the same way; asynchronous operations may complete eagerly.
"""

from . import random
from .devicearray import (
    DeviceNDArray,
    MappedNDArray,
    as_cuda_array,
    device_array,
    device_array_like,
    is_cuda_array,
    mapped_array,
    mapped_array_like,
    pinned_array,
    pinned_array_like,
    to_device,
)
from .device import (
    Device,
    defer_cleanup,
    detect,
    get_current_device,
    is_available,
    list_devices,
    profile_start,
    profile_stop,
    profiling,
    select_device,
    synchronize,
)
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

__all__ = [
    "DeviceNDArray",
    "MappedNDArray",
    "Device",
    "Event",
    "Stream",
    "as_cuda_array",
    "default_stream",
    "defer_cleanup",
    "detect",
    "device_array",
    "device_array_like",
    "event",
    "event_elapsed_time",
    "external_stream",
    "get_current_device",
    "is_available",
    "is_cuda_array",
    "jit",
    "legacy_default_stream",
    "list_devices",
    "mapped_array",
    "mapped_array_like",
    "per_thread_default_stream",
    "pinned",
    "pinned_array",
    "pinned_array_like",
    "profile_start",
    "profile_stop",
    "profiling",
    "random",
    "select_device",
    "stream",
    "synchronize",
    "to_device",
]


import contextlib as _contextlib


@_contextlib.contextmanager
def pinned(*arrays):
    """Numba pins the arrays for the block; Kiln copies from pageable memory
    just as well, so this is a no-op context manager."""
    yield


_COMPILER_NAMES = {
    "guvectorize": "@guvectorize ufuncs",
    "declare_device": "declared device functions",
    "compile_ptx": "PTX compilation",
    "compile_ptx_for_current_device": "PTX compilation",
    "compile": "compilation",
}


def __getattr__(name):
    # kiln.dispatcher (and what it imports) loads only where kernels are
    # defined in Python: importing a built module stays as quick as it was.
    if name in ("jit", "reduce", "vectorize"):
        from kiln import dispatcher

        return getattr(dispatcher, name)
    if name in _COMPILER_NAMES:
        raise AttributeError(
            f"kiln.cuda has no {name!r}: Kiln compiles ahead of time, so {_COMPILER_NAMES[name]} are not "
            "built at run time. Keep the kernels in a module written for Numba, build it with "
            "`kiln build kernels.py --module kernels -o DIR` and import the built module (from DIR) "
            "to get its kernels, ufuncs and reductions."
        )
    raise AttributeError(f"module 'kiln.cuda' has no attribute {name!r}")
