"""Device arrays: `DeviceNDArray` and the functions that make them.

A `DeviceNDArray` is a NumPy-like view of target memory ("device" memory:
GPU memory on the CUDA target, host memory on the CPU target). Its C base,
`kiln._runtime.DeviceArrayBase`, holds what dispatch reads (shape, strides,
dtype, data pointer, owner); this module adds Numba's methods on top.

The data pointer is the address of the element at index (0, ..., 0), whatever
the strides (negative strides are allowed); `owner` keeps the allocation (or
the foreign object) alive, and views share their base's owner.
"""

import contextlib
import operator

import numpy as np

from kiln import _interop, _runtime
from kiln._strides import contiguous_strides

from . import memory_manager, memory_pointers
from .context import current_context, get_current_device
from .streams import stream_handle

__all__ = [
    "DeviceNDArray",
    "ManagedNDArray",
    "MappedNDArray",
    "device_array",
    "device_array_like",
    "mapped_array",
    "mapped_array_like",
    "pinned_array",
    "pinned_array_like",
    "to_device",
    "as_cuda_array",
    "from_cuda_array_interface",
    "is_cuda_array",
    "managed_array",
    "mapped",
    "open_ipc_array",
]

# PEP 3118 format strings, per dtype (DeviceArrayBase wants one; datetime64
# and timedelta64 have none, and it reads their element from the dtype).
_FORMATS = {}


def _format(dtype):
    try:
        return _FORMATS[dtype]
    except KeyError:
        text = "" if dtype.kind in "mM" else memoryview(np.empty(0, dtype)).format
        _FORMATS[dtype] = text
        return text


# ---------------------------------------------------------------------------
# Layout arithmetic (pure Python).


def _normalize_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    result = []
    for extent in shape:
        if not isinstance(extent, (int, np.integer)):
            raise TypeError(f"shape elements must be integers, got {type(extent).__name__}")
        if extent < 0:
            raise ValueError("negative dimensions are not allowed")
        result.append(int(extent))
    return tuple(result)


def _prepare(shape, strides, dtype, order):
    dtype = np.dtype(dtype)
    shape = _normalize_shape(shape)
    if strides is None:
        if order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', not {order!r}")
        strides = contiguous_strides(shape, dtype.itemsize, order)
    else:
        if isinstance(strides, (int, np.integer)):
            strides = (strides,)
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(shape):
            raise ValueError("strides not match ndim")
    return shape, strides, dtype


def _extent(shape, strides, itemsize):
    """(low, high): the byte range the array touches, relative to element 0."""
    if any(s == 0 for s in shape):
        return 0, 0
    low = high = 0
    for extent, stride in zip(shape, strides):
        if stride < 0:
            low += (extent - 1) * stride
        else:
            high += (extent - 1) * stride
    return low, high + itemsize


def _is_contiguous(shape, strides, itemsize, order):
    if any(s == 0 for s in shape):
        return True
    expected = itemsize
    dims = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for dim in dims:
        if shape[dim] != 1:
            if strides[dim] != expected:
                return False
            expected *= shape[dim]
    return True


def _index(item, shape, strides, itemsize):
    """Basic indexing: (new shape, new strides, byte offset, is_element)."""
    if not isinstance(item, tuple):
        item = (item,)
    consumed = sum(1 for i in item if i is not None and i is not Ellipsis)
    ellipses = sum(1 for i in item if i is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, but {consumed} were indexed"
        )
    expanded = []
    for i in item:
        if i is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - consumed))
        else:
            expanded.append(i)
    if not ellipses:
        expanded.extend([slice(None)] * (len(shape) - consumed))

    new_shape, new_strides = [], []
    offset = 0
    dim = 0
    for i in expanded:
        if i is None:
            new_shape.append(1)
            new_strides.append(0)
            continue
        if isinstance(i, slice):
            start, stop, step = i.indices(shape[dim])
            count = len(range(start, stop, step))
            if count:
                offset += start * strides[dim]
            new_shape.append(count)
            new_strides.append(strides[dim] * step)
            dim += 1
            continue
        if isinstance(i, (bool, np.bool_)):
            raise IndexError("boolean indices are not supported by device arrays")
        try:
            index = operator.index(i)
        except TypeError:
            raise IndexError(
                "device arrays support only integers, slices (`:`), ellipsis (`...`) and "
                f"numpy.newaxis (`None`) as indices, not {type(i).__name__}"
            ) from None
        extent = shape[dim]
        if index < -extent or index >= extent:
            raise IndexError(f"index {index} is out of bounds for axis {dim} with size {extent}")
        if index < 0:
            index += extent
        offset += index * strides[dim]
        dim += 1
    is_element = not new_shape and all(i is not None for i in expanded)
    return tuple(new_shape), tuple(new_strides), offset, is_element


def _host_bytes(array):
    """A writable-or-not flat byte view of a C-contiguous NumPy array."""
    return array.reshape(-1).view(np.uint8) if array.ndim else array.reshape(1).view(np.uint8)


# ---------------------------------------------------------------------------
# DeviceNDArray


def _allocate_device_memory(nbytes):
    """(address, owner) of `nbytes` of device memory: from the memory
    manager plugin where one is set, else from Kiln's runtime."""
    pointer = memory_manager.plugin_allocation(current_context(), nbytes)
    if pointer is not None:
        return pointer.device_pointer.value, pointer
    buffer = _runtime.DeviceBuffer(nbytes)
    return buffer.pointer, buffer


class DeviceNDArray(_runtime.DeviceArrayBase):
    """An array in device memory (`numba.cuda.cudadrv.devicearray.DeviceNDArray`).

    Create them with `to_device`, `device_array` or `device_array_like`;
    indexing gives views that share memory with this array.
    """

    # --- construction ---------------------------------------------------

    @classmethod
    def _view(cls, shape, strides, dtype, pointer, owner, stream=0):
        return cls(shape, strides, dtype, _format(dtype), pointer, owner, stream)

    @classmethod
    def _allocate(cls, shape, strides, dtype, stream=0):
        low, high = _extent(shape, strides, dtype.itemsize)
        if high - low <= 0:
            return cls._view(shape, strides, dtype, 0, None, stream)
        address, owner = _allocate_device_memory(high - low)
        return cls._view(shape, strides, dtype, address - low, owner, stream)

    @classmethod
    def over_memory(cls, memory, shape, dtype, strides=None):
        """An array of `shape` and `dtype` (C-contiguous without `strides`)
        whose element 0 is the first byte of `memory` (a MemoryPointer),
        which it keeps alive."""
        shape, strides, dtype = _prepare(shape, strides, dtype, "C")
        return cls._view(shape, strides, dtype, memory.device_pointer.value, memory)

    # --- NumPy-like attributes -----------------------------------------

    @property
    def stream(self):
        """The stream this array's operations default to (0: the default stream)."""
        return self.stream_handle

    @property
    def flags(self):
        return {"C_CONTIGUOUS": self.is_c_contiguous(), "F_CONTIGUOUS": self.is_f_contiguous()}

    def is_c_contiguous(self):
        """True if the array is C-contiguous (NumPy's rule: size-1 axes ignored)."""
        return _is_contiguous(self.shape, self.strides, self.itemsize, "C")

    def is_f_contiguous(self):
        """True if the array is Fortran-contiguous."""
        return _is_contiguous(self.shape, self.strides, self.itemsize, "F")

    @property
    def alloc_size(self):
        low, high = _extent(self.shape, self.strides, self.itemsize)
        return high - low

    @property
    def device_ctypes_pointer(self):
        import ctypes

        return ctypes.c_void_p(self.device_pointer or None)

    @property
    def __cuda_array_interface__(self):
        contiguous = self.is_c_contiguous()
        handle = self.stream_handle
        return {
            "shape": tuple(self.shape),
            "strides": None if contiguous else tuple(self.strides),
            "data": (self.device_pointer, False),
            "typestr": self.dtype.str,
            "descr": self.dtype.descr if self.dtype.fields is not None else [("", self.dtype.str)],
            "stream": int(handle) if handle else None,
            "version": 3,
        }

    def __dlpack_device__(self):
        """(kDLCUDA, the device's ordinal) on a GPU; (kDLCPU, 0) on the CPU
        engine, whose device memory is host memory."""
        if _runtime.target() == "cuda":
            return _interop.KDL_CUDA, get_current_device().id
        return _interop.KDL_CPU, 0

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this array, for `torch.from_dlpack`,
        `cupy.from_dlpack` or `numpy.from_dlpack` (on the CPU engine), as the
        array API standard asks: without a copy unless `copy=True`; the
        versioned layout when the consumer's `max_version` is 1.0 or newer;
        work queued on this array's stream is done before a consumer on
        another `stream` (an int handle, 1 or 2 the default streams, -1 for
        none) uses it."""
        # Imported here: its ctypes set-up stays off `import kiln.cuda`.
        from kiln import _dlpack_export

        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError(f"a Kiln device array is on DLPack device {device}; it cannot be exported to "
                              f"{tuple(dl_device)} (copy it to the host with copy_to_host())")
        if device[0] == _interop.KDL_CUDA:
            if stream == 0 or isinstance(stream, bool) or not (stream is None or isinstance(stream, int)):
                raise ValueError(f"__dlpack__: stream must be None, -1 or a stream handle other than 0, "
                                 f"not {stream!r}")
            own = self.stream_handle
            if stream != -1 and own and own != stream:
                _runtime.Stream.wrap(own).synchronize()
        array = self
        if copy:
            array = device_array_like(self, stream=self.stream_handle)
            array.copy_to_device(self)
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        return _dlpack_export.export(array.device_pointer, array.shape, array.strides, array.dtype, device,
                                     array, versioned, copied=bool(copy))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"<kiln.cuda.DeviceNDArray shape={self.shape} dtype={self.dtype} at {self.device_pointer:#x}>"

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("`copy=False` is not supported. A copy is always created.")
        host = self.copy_to_host()
        return host if dtype is None else host.astype(dtype)

    def _default_stream(self, stream):
        # As Numba: a falsy `stream` (0, None) means the array's own stream;
        # a stream object (even the default stream's) is used as given.
        if not stream and not hasattr(stream, "handle"):
            return self.stream_handle
        return stream_handle(stream)

    def bind(self, stream=0):
        """A view of this array whose operations default to `stream`."""
        return self._view(self.shape, self.strides, self.dtype, self.device_pointer, self.owner, stream_handle(stream))

    # --- copies -------------------------------------------------------

    def _base_pointer(self):
        low, _ = _extent(self.shape, self.strides, self.itemsize)
        return self.device_pointer + low

    def get_ipc_handle(self):
        """An IpcArrayHandle another process opens this array with (CUDA
        IPC, on a GPU): pickle it and send it there, then `with handle as
        array:` or `handle.open()` ... `handle.close()` in that process. The
        memory must stay alive here until the other process has closed it."""
        ipc = memory_pointers.ipc_handle_of(self.device_pointer, self.alloc_size, self,
                                            get_current_device().get_device_identity())
        return IpcArrayHandle(ipc, {"shape": self.shape, "strides": self.strides, "dtype": self.dtype})

    def copy_to_host(self, ary=None, stream=0):
        """Copy this array into `ary` (a NumPy array), or into a new one.

        With a `stream` (or an array bound to one) the copy is asynchronous:
        synchronize the stream before reading `ary`. The result has this
        array's strides, as Numba's does.
        """
        handle = self._default_stream(stream)
        low, high = _extent(self.shape, self.strides, self.itemsize)
        size = high - low
        if ary is not None:
            _check_compatible(self, ary)
            if size == 0:
                return ary
            if ary.flags.writeable and (
                (self.is_c_contiguous() and ary.flags.c_contiguous)
                or (self.is_f_contiguous() and ary.flags.f_contiguous)
            ):
                flat = ary.reshape(-1, order="A").view(np.uint8)
                _runtime.copy_to_host(flat, self._base_pointer(), self.nbytes, handle)
                return ary
            staged = self.copy_to_host(stream=handle)
            if handle:
                _runtime.Stream.wrap(handle).synchronize()
            np.copyto(ary, staged.reshape(ary.shape), casting="no")
            return ary
        if size == 0:
            return np.empty(self.shape, dtype=self.dtype)
        buffer = np.empty(size, dtype=np.uint8)
        _runtime.copy_to_host(buffer, self._base_pointer(), size, handle)
        return np.ndarray(self.shape, dtype=self.dtype, buffer=buffer, offset=-low, strides=self.strides)

    def copy_to_device(self, ary, stream=0):
        """Copy `ary` (a host array, or a device array) into this array."""
        handle = self._default_stream(stream)
        source = _device_view(ary, handle)
        if source is not None:
            if source.size == 0:
                return
            _check_compatible(self, source)
            if _same_contiguous_layout(self, source):
                _runtime.copy_on_device(self._base_pointer(), source._base_pointer(), self.nbytes, handle)
                return
            source = source.copy_to_host(stream=handle)
            if handle:
                _runtime.Stream.wrap(handle).synchronize()
        else:
            source = np.asarray(ary)
            if source.size == 0:
                return
        _check_compatible(self, source)
        self._write_host(source.reshape(self.shape), handle)

    def _write_host(self, host, handle):
        """Write `host` (same shape and dtype as self) into this array."""
        if self.size == 0:
            return
        for order in ("C", "F"):
            if _is_contiguous(self.shape, self.strides, self.itemsize, order):
                data = np.ascontiguousarray(host) if order == "C" else np.asfortranarray(host)
                temporary = data is not host and not np.shares_memory(data, host)
                flat = data.reshape(-1, order=order).view(np.uint8)
                _runtime.copy_to_device(self._base_pointer(), flat, self.nbytes, handle)
                if temporary and handle:
                    _runtime.Stream.wrap(handle).synchronize()
                return
        # A strided destination: copy the largest contiguous trailing block
        # at a time.
        dims = self.ndim
        inner = dims
        expected = self.itemsize
        while inner > 0 and (self.shape[inner - 1] == 1 or self.strides[inner - 1] == expected):
            expected *= self.shape[inner - 1]
            inner -= 1
        chunk = expected
        data = np.ascontiguousarray(host)
        pieces = []  # alive until the copies are done
        for outer in np.ndindex(*self.shape[:inner]):
            offset = sum(i * s for i, s in zip(outer, self.strides))
            piece = np.ascontiguousarray(data[outer] if outer else data)
            pieces.append(piece)
            _runtime.copy_to_device(self.device_pointer + offset, _host_bytes(piece), chunk, handle)
        if handle:
            _runtime.Stream.wrap(handle).synchronize()

    # --- indexing ----------------------------------------------------

    def __getitem__(self, item):
        return self.getitem(item)

    def getitem(self, item, stream=0):
        """`self[item]` with a stream for the element copy."""
        shape, strides, offset, is_element = _index(item, self.shape, self.strides, self.itemsize)
        pointer = self.device_pointer + offset
        handle = self._default_stream(stream)
        if is_element:
            host = np.empty(1, dtype=self.dtype)
            _runtime.copy_to_host(host.view(np.uint8), pointer, self.itemsize, handle)
            if handle:
                _runtime.Stream.wrap(handle).synchronize()
            return host[0]
        return self._view(shape, strides, self.dtype, pointer, self.owner, handle)

    def __setitem__(self, key, value):
        self.setitem(key, value)

    def setitem(self, key, value, stream=0):
        """`self[key] = value` with a stream; synchronous without one."""
        handle = self._default_stream(stream)
        shape, strides, offset, _ = _index(key, self.shape, self.strides, self.itemsize)
        target = self._view(shape, strides, self.dtype, self.device_pointer + offset, self.owner, handle)
        if target.size == 0:
            return
        source = _device_view(value, handle)
        if source is not None:
            if source.ndim > target.ndim:
                raise ValueError(f"Can't assign {source.ndim}-D array to {target.ndim}-D self")
            if (
                source.shape == target.shape
                and source.dtype == target.dtype
                and _same_contiguous_layout(target, source)
            ):
                _runtime.copy_on_device(target._base_pointer(), source._base_pointer(), target.nbytes, handle)
                if handle:
                    _runtime.Stream.wrap(handle).synchronize()
                return
            value = source.copy_to_host(stream=handle)
            if handle:
                _runtime.Stream.wrap(handle).synchronize()
        value = np.asarray(value)
        if value.ndim > target.ndim:
            raise ValueError(f"Can't assign {value.ndim}-D array to {target.ndim}-D self")
        for i, (l, r) in enumerate(zip(target.shape[target.ndim - value.ndim :], value.shape)):
            if r != 1 and l != r:
                raise ValueError(
                    f"Can't copy sequence with size {r} to array axis {i + target.ndim - value.ndim} "
                    f"with dimension {l}"
                )
        if value.ndim == 0 and target.is_c_contiguous():
            scalar = np.asarray(value, dtype=self.dtype)
            raw = scalar.tobytes()
            if raw == bytes([raw[0]]) * len(raw):
                _runtime.fill(target._base_pointer(), raw[0], target.nbytes, handle)
                if handle:
                    _runtime.Stream.wrap(handle).synchronize()
                return
        host = np.broadcast_to(np.asarray(value).astype(self.dtype, copy=False), target.shape)
        target._write_host(host, handle)
        if handle:
            _runtime.Stream.wrap(handle).synchronize()

    # --- reshaping ----------------------------------------------------

    def reshape(self, *newshape, order="C"):
        """A view with a new shape; only for contiguous arrays (as Numba)."""
        if len(newshape) == 1 and isinstance(newshape[0], (tuple, list)):
            newshape = newshape[0]
        newshape = list(newshape)
        if newshape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in newshape:
            known = 1
            for s in newshape:
                if s != -1:
                    known *= s
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(newshape)}")
            newshape[newshape.index(-1)] = self.size // known
        newshape = _normalize_shape(newshape)
        if tuple(newshape) == tuple(self.shape):
            return self._view(self.shape, self.strides, self.dtype, self.device_pointer, self.owner, self.stream_handle)
        size = 1
        for s in newshape:
            size *= s
        if size != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {newshape}")
        if order not in ("C", "F", "A"):
            raise ValueError("order not C|F|A")
        if order == "A":
            order = "F" if self.is_f_contiguous() and not self.is_c_contiguous() else "C"
        if (order == "C" and not self.is_c_contiguous()) or (order == "F" and not self.is_f_contiguous()):
            raise NotImplementedError("operation requires copying")
        strides = contiguous_strides(newshape, self.itemsize, order)
        return self._view(newshape, strides, self.dtype, self._base_pointer(), self.owner, self.stream_handle)

    def ravel(self, order="C", stream=0):
        """A 1-d view of a contiguous array (NotImplementedError otherwise)."""
        handle = self._default_stream(stream)
        flat = self.reshape((self.size,), order=order)
        return flat.bind(handle)

    def squeeze(self, axis=None, stream=0):
        """A view without the axes of size one."""
        if axis is None:
            axes = [i for i, s in enumerate(self.shape) if s == 1]
        else:
            axes = [axis] if isinstance(axis, int) else list(axis)
            axes = [a + self.ndim if a < 0 else a for a in axes]
            for a in axes:
                if self.shape[a] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        shape = tuple(s for i, s in enumerate(self.shape) if i not in axes)
        strides = tuple(s for i, s in enumerate(self.strides) if i not in axes)
        return self._view(shape, strides, self.dtype, self.device_pointer, self.owner, self._default_stream(stream))

    def view(self, dtype):
        """Reinterpret the bytes as another dtype (no copy)."""
        dtype = np.dtype(dtype)
        shape, strides = list(self.shape), list(self.strides)
        if dtype.itemsize != self.itemsize:
            if not self.is_c_contiguous():
                raise ValueError("To change to a dtype of a different size, the array must be C-contiguous")
            shape[-1], remainder = divmod(shape[-1] * self.itemsize, dtype.itemsize)
            if remainder:
                raise ValueError(
                    "When changing to a larger dtype, its size must be a divisor of the total size in bytes "
                    "of the last axis of the array."
                )
            strides[-1] = dtype.itemsize
        return self._view(tuple(shape), tuple(strides), dtype, self.device_pointer, self.owner, self.stream_handle)

    def transpose(self, axes=None):
        """A transposed *copy*, as Numba's (which runs a transpose kernel)."""
        if axes is not None and tuple(axes) == tuple(range(self.ndim)):
            return self
        if self.ndim != 2:
            raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
        if axes is not None and set(axes) != set(range(self.ndim)):
            raise ValueError(f"invalid axes list {axes!r}")
        return to_device(np.ascontiguousarray(self.copy_to_host().T), stream=self.stream_handle)

    @property
    def T(self):
        return self.transpose()

    def split(self, section, stream=0):
        """Views of consecutive `section`-element pieces of a 1-d unit-stride array."""
        handle = self._default_stream(stream)
        if self.ndim != 1:
            raise ValueError("only support 1d array")
        if self.strides[0] != self.itemsize:
            raise ValueError("only support unit stride")
        for begin in range(0, self.size, section):
            end = min(begin + section, self.size)
            yield self._view(
                (end - begin,), self.strides, self.dtype, self.device_pointer + begin * self.itemsize, self.owner, handle
            )


def _check_compatible(a, b):
    if a.dtype != b.dtype:
        raise TypeError(f"incompatible dtype: {a.dtype} vs. {b.dtype}")
    squeezed_a = tuple(s for s in a.shape if s != 1)
    squeezed_b = tuple(s for s in b.shape if s != 1)
    if squeezed_a != squeezed_b:
        raise ValueError(f"incompatible shape: {tuple(a.shape)} vs. {tuple(b.shape)}")


def _same_contiguous_layout(a, b):
    if a.shape == b.shape and tuple(a.strides) == tuple(b.strides):
        low, high = _extent(a.shape, a.strides, a.itemsize)
        return high - low == a.nbytes
    if a.size != b.size:
        return False
    return (a.is_c_contiguous() and b.is_c_contiguous()) or (a.is_f_contiguous() and b.is_f_contiguous())


def _device_view(obj, handle=0):
    """`obj` as a DeviceNDArray if it is device memory, else None."""
    if isinstance(obj, DeviceNDArray):
        return obj
    if isinstance(obj, np.ndarray) and not isinstance(obj, MappedNDArray):
        return None
    if isinstance(obj, (int, float, complex, bool, np.generic, list, tuple)) or obj is None:
        return None
    return as_device_array(obj, handle)


def as_device_array(obj, handle=0, sync=True):
    """A DeviceNDArray view of `obj` (itself if it is one), or None if it
    is no device array: what dispatch calls for an argument it does not
    know. Other libraries' arrays (CUDA Array Interface, DLPack) are viewed
    without a copy; `cuda.In`, `cuda.Out` and `cuda.InOut` give the device
    array they stand for."""
    if isinstance(obj, DeviceNDArray):
        return obj
    as_argument = getattr(obj, "_kiln_device_argument", None)
    if as_argument is not None:
        return as_argument(handle)
    foreign = _interop.foreign_array(obj, handle, sync)
    return None if foreign is None else DeviceNDArray._view(*foreign)


# ---------------------------------------------------------------------------
# Host memory


class MappedNDArray(np.ndarray):
    """A NumPy array in mapped (pinned, device-visible) host memory.

    Kernels can use it in place: it carries `__cuda_array_interface__` with
    the device address of its data.
    """

    def __array_finalize__(self, obj):
        mapping = getattr(obj, "_kiln_mapping", None)
        if mapping is not None:
            host, _, nbytes, _ = mapping
            address = self.__array_interface__["data"][0]
            if not host <= address <= host + nbytes:
                mapping = None
        self._kiln_mapping = mapping
        self._kiln_stream = getattr(obj, "_kiln_stream", 0)

    @property
    def __cuda_array_interface__(self):
        mapping = getattr(self, "_kiln_mapping", None)
        if mapping is None:
            raise AttributeError("this array is not in mapped memory")
        host, device, _, _ = mapping
        contiguous = self.flags.c_contiguous
        return {
            "shape": tuple(self.shape),
            "strides": None if contiguous else tuple(self.strides),
            "data": (device + (self.__array_interface__["data"][0] - host), False),
            "typestr": self.dtype.str,
            "descr": self.dtype.descr if self.dtype.fields is not None else [("", self.dtype.str)],
            "stream": int(self._kiln_stream) if self._kiln_stream else None,
            "version": 3,
        }


def _host_allocation(shape, strides, dtype, order, mapped):
    shape, strides, dtype = _prepare(shape, strides, dtype, order)
    low, high = _extent(shape, strides, dtype.itemsize)
    if high - low <= 0:
        return np.ndarray(shape, dtype=dtype, strides=strides), None
    buffer = _runtime.HostBuffer(high - low, mapped=mapped)
    array = np.ndarray(shape, dtype=dtype, buffer=buffer, offset=-low, strides=strides)
    return array, buffer


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """A NumPy array in page-locked host memory (like numpy.empty)."""
    array, _ = _host_allocation(shape, strides, dtype, order, mapped=False)
    return array


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False, wc=False):
    """A NumPy array (a `MappedNDArray`) in host memory mapped into the device."""
    array, buffer = _host_allocation(shape, strides, dtype, order, mapped=True)
    view = array.view(MappedNDArray)
    if buffer is not None:
        view._kiln_mapping = (buffer.pointer, buffer.device_pointer, buffer.nbytes, buffer)
    else:
        view._kiln_mapping = (0, 0, 0, None)
    view._kiln_stream = stream_handle(stream)
    return view


def _contiguous_strides_like(ary):
    if ary.flags["C_CONTIGUOUS"] or ary.flags["F_CONTIGUOUS"] or ary.ndim <= 1:
        return None
    order = sorted(range(ary.ndim), key=lambda i: ary.strides[i])
    strides = [0] * ary.ndim
    stride = ary.dtype.itemsize
    for i in order:
        strides[i] = stride
        stride *= ary.shape[i]
    return tuple(strides)


def _order_like(ary):
    flags = ary.flags
    return "F" if flags["F_CONTIGUOUS"] and not flags["C_CONTIGUOUS"] else "C"


def pinned_array_like(ary):
    return pinned_array(ary.shape, ary.dtype, _contiguous_strides_like(ary), _order_like(ary))


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    return mapped_array(ary.shape, ary.dtype, _contiguous_strides_like(ary), _order_like(ary), stream)


def in_place_view(host, handle=0):
    """A DeviceNDArray over the NumPy array `host`'s own memory, which it
    keeps alive: on the CPU engine, whose device memory is host memory, a
    kernel uses it in place."""
    return DeviceNDArray._view(host.shape, host.strides, host.dtype, host.__array_interface__["data"][0], host,
                               handle)


class ManagedNDArray(MappedNDArray):
    """A NumPy array in managed (unified) memory, which the host and kernels
    both use in place."""


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0, attach_global=True):
    """A NumPy array (a `ManagedNDArray`) in managed memory: on a GPU, memory
    the driver migrates between host and device; on the CPU engine, host
    memory, which is its device memory."""
    shape, strides, dtype = _prepare(shape, strides, dtype, order)
    low, high = _extent(shape, strides, dtype.itemsize)
    mapping = (0, 0, 0, None)
    if high - low > 0:
        import ctypes  # here, not at import: importing kiln.cuda stays quick

        buffer = _runtime.DeviceBuffer(high - low, managed=True)
        memory = (ctypes.c_byte * (high - low)).from_address(buffer.pointer)
        array = np.ndarray(shape, dtype=dtype, buffer=memory, offset=-low, strides=strides)
        mapping = (buffer.pointer, buffer.pointer, high - low, buffer)
    else:
        array = np.ndarray(shape, dtype=dtype, strides=strides)
    view = array.view(ManagedNDArray)
    view._kiln_mapping = mapping
    view._kiln_stream = stream_handle(stream)
    return view


@contextlib.contextmanager
def mapped(*arylist, stream=0):
    """Device arrays of the host arrays `arylist` for the block: one array,
    or a list of them. On the CPU engine they are the host arrays' memory;
    on a GPU, Kiln's runtime cannot map pageable memory, so they are copies,
    copied back into the host arrays when the block ends."""
    handle = stream_handle(stream)
    hosts = [np.asarray(array) for array in arylist]
    if _runtime.shares_host_memory():
        devices = [in_place_view(host, handle) for host in hosts]
    else:
        devices = [to_device(host, stream=handle) for host in hosts]
    try:
        yield devices[0] if len(devices) == 1 else devices
    finally:
        if not _runtime.shares_host_memory():
            for host, device in zip(hosts, devices):
                device.copy_to_host(host, stream=handle)
            _runtime.synchronize()


# ---------------------------------------------------------------------------
# Device allocation


# IpcHandle.open_array makes these; memory_pointers sits below this module.
memory_pointers.IpcHandle.array_type = DeviceNDArray


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """An uninitialized device array (like numpy.empty)."""
    shape, strides, dtype = _prepare(shape, strides, dtype, order)
    return DeviceNDArray._allocate(shape, strides, dtype, stream_handle(stream))


def device_array_like(ary, stream=0):
    """`device_array` with the shape, dtype and layout of `ary`."""
    return device_array(ary.shape, ary.dtype, _contiguous_strides_like(ary), _order_like(ary), stream)


def to_device(obj, stream=0, copy=True, to=None):
    """Copy a NumPy array (or anything `numpy.asarray` takes) to the device.

    With `to`, copies into that device array instead. Device arrays (and
    objects exporting `__cuda_array_interface__`) come back as they are.
    """
    if to is not None:
        if copy:
            to.copy_to_device(obj, stream=stream)
        return to
    handle = stream_handle(stream)
    existing = _device_view(obj, handle)
    if existing is not None:
        return existing
    host = np.asarray(obj)
    if not (host.flags.c_contiguous or host.flags.f_contiguous) or 0 in host.strides:
        host = np.ascontiguousarray(host)
    order = "F" if host.flags.f_contiguous and not host.flags.c_contiguous else "C"
    device = device_array(host.shape, host.dtype, None, order, handle)
    if copy:
        device._write_host(host, handle)
    return device


def as_cuda_array(obj, sync=True):
    """A DeviceNDArray view (no copy) of an object exporting `__cuda_array_interface__`
    (or DLPack); `sync` synchronizes the exporter's stream first, as Numba."""
    if isinstance(obj, DeviceNDArray):
        return obj
    if getattr(obj, "__cuda_array_interface__", None) is None and not _interop.is_dlpack(obj):
        raise TypeError("*obj* doesn't implement the cuda array interface.")
    view = as_device_array(obj, 0, sync=sync)
    if view is None:
        raise TypeError("*obj* doesn't implement the cuda array interface.")
    return view


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A DeviceNDArray over the memory a `__cuda_array_interface__` dict
    describes; `owner` is kept alive as long as the array."""
    return DeviceNDArray._view(*_interop.from_cuda_array_interface(desc, owner=owner, sync=sync))


class IpcArrayHandle:
    """A device array as another process opens it (Numba's IpcArrayHandle):
    an IpcHandle and the array's shape, strides and dtype. Picklable; in the
    other process `open()` gives the array and `close()` lets it go, or
    `with handle as array:` does both."""

    def __init__(self, ipc_handle, array_desc):
        self._ipc_handle = ipc_handle
        self._array_desc = array_desc

    def open(self):
        return self._ipc_handle.open_array(current_context(), **self._array_desc)

    def close(self):
        self._ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc_info):
        self.close()


@contextlib.contextmanager
def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """Another process's device array from its raw CUDA IPC handle (the 64
    bytes of a cuIpcMemHandle, as CuPy's ipcGetMemHandle gives), `offset`
    bytes into the allocation; closed when the `with` block ends."""
    dtype = np.dtype(dtype)
    shape = _normalize_shape(shape)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    ipc = memory_pointers.IpcHandle(None, bytes(handle), size, offset=offset)
    array = ipc.open_array(current_context(), shape, dtype, strides)
    try:
        yield array
    finally:
        ipc.close()


def is_cuda_array(obj):
    """True if `obj` has `__cuda_array_interface__` (not validated)."""
    return hasattr(obj, "__cuda_array_interface__")
