"""Ufuncs from `@vectorize(..., target='cuda')`, over Kiln's synthesized kernel.

The kernel (frontend/emit/synthesized_kernels.h) takes one 1-d array of any
layout per input plus the output, and computes out[i] = core(x1[i], ...)
for i < len(out), one element per thread. This class does the rest, as
Numba's CUDA ufunc dispatcher does:

- loop selection: array inputs must match a signature's types exactly,
  scalars take the type of the signature (first by their own NumPy type,
  then any); Kiln adds a last resort, the first signature every input
  safely casts to;
- NumPy broadcasting: every operand becomes a view with stride 0 along
  broadcast axes; axes that are contiguous for every operand are merged,
  and the kernel runs once per remaining outer index (once in the usual
  cases: same-shape arrays, arrays and scalars);
- results: host inputs give a NumPy result (a NumPy scalar for 0-d), any
  device input gives a device array; `out=` (host or device) is filled and
  returned; `stream=` queues everything on that stream.
"""

import itertools
import math

import numpy as np

from kiln import _runtime

__all__ = ["Ufunc"]

_THREADS = 256


def _split_types(text):
    """'(a, array(float32, 1d, A))' -> ['a', 'array(float32, 1d, A)']."""
    text = text.strip()
    start = text.find("(")
    if start >= 0 and text.endswith(")"):
        head = text[:start].strip()
        if head in ("", "void", "none") or not head.startswith("array"):
            text = text[start + 1 : -1]
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def signature_types(signature):
    """The argument type strings of one entry of `kernel.signatures`."""
    if isinstance(signature, str):
        return _split_types(signature)
    args = getattr(signature, "args", None)
    if args is not None:
        return [str(a) for a in args]
    return [str(a) for a in signature]


def element_dtype(type_name):
    """'array(float32, 1d, A)' or 'float32' -> numpy.dtype('float32')."""
    name = type_name.strip()
    if name.startswith("array("):
        name = name[len("array(") : -1].rsplit(",", 2)[0].strip()
    if name in ("bool", "boolean"):
        return np.dtype(np.bool_)
    return np.dtype(name)


def _is_scalar(value):
    return isinstance(value, (bool, int, float, complex, np.generic)) and not isinstance(value, np.void)


def _weakly_fits(value, dtype):
    """Would NumPy (NEP 50) keep `dtype` for this scalar operand?"""
    kind = dtype.kind
    if isinstance(value, np.generic):
        return np.can_cast(value.dtype, dtype, "safe")
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        if kind in "iu":
            info = np.iinfo(dtype)
            return info.min <= value <= info.max
        return kind in "fc"
    if isinstance(value, float):
        return kind in "fc"
    if isinstance(value, complex):
        return kind == "c"
    return False


class Ufunc:
    """A compiled `@vectorize` ufunc: call it like a NumPy ufunc."""

    def __init__(self, name, kernel):
        self.__name__ = name
        self.name = name
        self._kernel = kernel
        loops = []
        for signature in kernel.signatures:
            types = [element_dtype(t) for t in signature_types(signature)]
            loops.append((tuple(types[:-1]), types[-1]))
        self._loops = loops
        self.nin = len(loops[0][0]) if loops else 0
        self.nout = 1
        self.nargs = self.nin + 1

    @property
    def types(self):
        """NumPy-style loop names, e.g. ['ff->f', 'qq->q']."""
        return ["".join(t.char for t in ins) + "->" + out.char for ins, out in self._loops]

    @property
    def ntypes(self):
        return len(self._loops)

    @property
    def signatures(self):
        return self._kernel.signatures

    def __repr__(self):
        return f"<kiln.ufunc.Ufunc {self.__name__} {self.types}>"

    # --- loop selection ----------------------------------------------

    def _resolve(self, operands):
        """The (input dtypes, output dtype) loop for `operands`."""
        has_scalars = any(kind == "scalar" for kind, _ in operands)
        if has_scalars:
            exact = [
                loop
                for loop in self._loops
                if all(
                    (np.asarray(v).dtype if kind == "scalar" else v.dtype) == t
                    for (kind, v), t in zip(operands, loop[0])
                )
            ]
            if exact:
                return exact[0]
        matches = [
            loop
            for loop in self._loops
            if all(kind == "scalar" or v.dtype == t for (kind, v), t in zip(operands, loop[0]))
        ]
        if len(matches) > 1:
            # Numba calls this ambiguous; NumPy's typing of the scalars decides.
            fitting = [
                loop
                for loop in matches
                if all(kind != "scalar" or _weakly_fits(v, t) for (kind, v), t in zip(operands, loop[0]))
            ]
            matches = fitting[:1] or matches[:1]
        if matches:
            return matches[0]
        for loop in self._loops:
            if all(
                _weakly_fits(v, t) if kind == "scalar" else np.can_cast(v.dtype, t, "safe")
                for (kind, v), t in zip(operands, loop[0])
            ):
                return loop
        given = ", ".join(
            type(v).__name__ if kind == "scalar" else str(v.dtype) for kind, v in operands
        )
        raise TypeError(
            f"ufunc '{self.__name__}' has no loop for inputs ({given}); compiled loops: "
            + ", ".join(self.types)
            + " (array inputs must have these types exactly or cast to them safely)"
        )

    # --- calling -------------------------------------------------------

    def __call__(self, *args, out=None, stream=0, **kwargs):
        from kiln.cuda import devicearray as da
        from kiln.cuda.streams import stream_handle

        if kwargs:
            raise TypeError(f"{self.__name__}() got unexpected keyword arguments: {', '.join(kwargs)}")
        if len(args) == self.nin + 1 and out is None:
            *args, out = args
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} arguments ({len(args)} given)")
        handle = stream_handle(stream)

        operands = []
        any_device = False
        for value in args:
            device = da._device_view(value, handle)
            if device is not None:
                operands.append(("device", device))
                any_device = True
            elif _is_scalar(value):
                operands.append(("scalar", value))
            else:
                operands.append(("host", np.asarray(value)))
        in_types, out_type = self._resolve(operands)

        shape = np.broadcast_shapes(*[() if kind == "scalar" else tuple(v.shape) for kind, v in operands])

        # The output.
        host_out = None
        device_out = None
        if out is not None:
            out_device = da._device_view(out, handle)
            if out_device is not None:
                device_out = out_device
            else:
                host_out = out
                if not isinstance(host_out, np.ndarray):
                    raise TypeError(f"out must be a NumPy or device array, not {type(out).__name__}")
                if not host_out.flags.writeable:
                    raise ValueError("out is a read-only array")
            target_out = device_out if device_out is not None else host_out
            if tuple(target_out.shape) != tuple(shape):
                raise ValueError(
                    f"out has shape {tuple(target_out.shape)}, but the broadcast inputs have shape {tuple(shape)}"
                )
            if target_out.dtype != out_type:
                raise TypeError(
                    f"out has dtype {target_out.dtype}, but ufunc '{self.__name__}' computes {out_type} "
                    "for these inputs"
                )
        cpu = _runtime.shares_host_memory()
        direct = False
        if device_out is not None:
            result = device_out
        elif host_out is not None and cpu and _host_usable(host_out):
            result = _host_view(host_out)
            direct = True
        else:
            result = da.device_array(shape, out_type, stream=handle)

        # The inputs, on the device, with the loop's types.
        views = []
        keep = []
        for (kind, value), dtype in zip(operands, in_types):
            if kind == "scalar":
                cell = da.to_device(np.array([value], dtype=dtype), stream=handle)
                keep.append(cell)
                view = da.DeviceNDArray._view(
                    shape, (0,) * len(shape), dtype, cell.device_pointer, cell.owner, handle
                )
            else:
                if kind == "device" and value.dtype != dtype:
                    value = np.asarray(value.copy_to_host(stream=handle))
                    if handle:
                        _runtime.Stream.wrap(handle).synchronize()
                    kind = "host"
                if kind == "host":
                    host = value if value.dtype == dtype else value.astype(dtype)
                    if cpu:
                        value = _host_view(host)
                    else:
                        value = da.to_device(host, stream=handle)
                    keep.append(host)
                view = _broadcast_view(value, shape)
            views.append(view)
        self._launch(views, result, shape, handle)

        if device_out is not None:
            return device_out
        if host_out is not None:
            if not direct:
                result.copy_to_host(host_out, stream=handle)
            elif not handle:
                _runtime.synchronize()
            return host_out
        if any_device:
            return result
        host = result.copy_to_host(stream=handle)
        if handle:
            _runtime.Stream.wrap(handle).synchronize()
        return host[()] if host.ndim == 0 else host

    def reduce(self, arg, stream=0):
        """Fold a 1-d array with this binary ufunc, as Numba's CUDA ufuncs do
        (pairwise halving); the input is not modified."""
        from kiln.cuda import devicearray as da
        from kiln.cuda.streams import stream_handle

        if self.nin != 2:
            raise TypeError(f"reduce only works on binary ufuncs; '{self.__name__}' takes {self.nin} inputs")
        handle = stream_handle(stream)
        device = da._device_view(arg, handle)
        host = None if device is not None else np.asarray(arg)
        source = device if device is not None else host
        if source.ndim != 1:
            raise ValueError("reduce needs a 1-d array")
        n = source.shape[0]
        if n == 0:
            raise TypeError("Reduction on an empty array.")
        if n == 1:
            return source[0]
        work = da.device_array(n, dtype=source.dtype, stream=handle)
        work.copy_to_device(source, stream=handle)
        while n > 1:
            half = n // 2
            left = work[:half]
            self(left, work[n - half : n], out=left, stream=handle)
            # With n odd, the middle element (index half) is not paired; it
            # stays where the next round reads it.
            n = half + n % 2
        return work.getitem(0, stream=handle)

    def _launch(self, inputs, out, shape, handle):
        size = math.prod(shape)
        if size == 0:
            return
        operands = list(inputs) + [out]
        if not shape:
            dims, counts = [], []
        else:
            # Merge axes contiguous for every operand; drop axes of length 1.
            counts = [shape[-1]]
            strides = [[op.strides[-1]] for op in operands]
            for axis in range(len(shape) - 2, -1, -1):
                extent = shape[axis]
                if extent == 1:
                    continue
                if counts[0] == 1:
                    counts[0] = extent
                    for i, op in enumerate(operands):
                        strides[i][0] = op.strides[axis]
                    continue
                if all(op.strides[axis] == strides[i][0] * counts[0] for i, op in enumerate(operands)):
                    counts[0] *= extent
                else:
                    counts.insert(0, extent)
                    for i, op in enumerate(operands):
                        strides[i].insert(0, op.strides[axis])
            dims = strides
        inner = counts[-1] if counts else 1
        outer = counts[:-1]
        blocks = (inner + _THREADS - 1) // _THREADS
        threads = min(inner, _THREADS)
        launch = self._kernel[blocks, threads, handle]
        from kiln.cuda.devicearray import DeviceNDArray

        for index in itertools.product(*[range(c) for c in outer]):
            args = []
            for i, op in enumerate(operands):
                inner_stride = dims[i][-1] if dims else 0
                offset = sum(j * s for j, s in zip(index, dims[i][:-1])) if dims else 0
                args.append(
                    DeviceNDArray._view((inner,), (inner_stride,), op.dtype, op.device_pointer + offset, op.owner, handle)
                )
            launch(*args)


def _host_usable(array):
    return array.flags.writeable and array.dtype.fields is None


def _host_view(array):
    """On the CPU target: a device view of a NumPy array's own memory."""
    from kiln.cuda.devicearray import DeviceNDArray

    pointer = array.__array_interface__["data"][0]
    return DeviceNDArray._view(tuple(array.shape), tuple(array.strides), array.dtype, pointer, array, 0)


def _broadcast_view(array, shape):
    from kiln.cuda.devicearray import DeviceNDArray

    if tuple(array.shape) == tuple(shape):
        return array
    missing = len(shape) - array.ndim
    strides = [0] * missing + [
        0 if extent != target else stride
        for extent, target, stride in zip(array.shape, shape[missing:], array.strides)
    ]
    return DeviceNDArray._view(tuple(shape), tuple(strides), array.dtype, array.device_pointer, array.owner,
                               array.stream_handle)

