"""Kernels compiled by Kiln's back end, launched on the CPU engine from Python.

A test-only stand-in for the runtime: it compiles a kernel module with the
back end (through the kiln_cpu_runner library, loaded with ctypes), packs
arguments as docs/abi.md lays them out, and launches the way Numba does:

    module = compile_module(path)
    module.add_kernel[blocks, threads](x, y, out)   # kernels
    module.add_ufunc(x, y)                          # ufuncs, NumPy broadcasting
    module.sum_reduce(values, init=0)               # reductions

Specializations are chosen by exact argument types (array dtype, rank and
layout; Python ints as int64 and floats as float64, NumPy scalars as
their dtype), which is all the tests need.
"""

import ctypes
import json
import math
import os
import pathlib
import tempfile

import numpy as np

_LIBRARY = None


def _library():
    global _LIBRARY
    if _LIBRARY is None:
        build = pathlib.Path(
            os.environ.get("KILN_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] / "build")
        )
        lib = ctypes.CDLL(str(build / "tests" / "backend" / "libkiln_cpu_runner.so"))
        lib.kiln_test_compile.restype = ctypes.c_void_p
        lib.kiln_test_compile.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.kiln_test_describe.restype = ctypes.c_char_p
        lib.kiln_test_describe.argtypes = [ctypes.c_void_p]
        lib.kiln_test_launch.restype = ctypes.c_int
        lib.kiln_test_launch.argtypes = [
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_uint),
            ctypes.POINTER(ctypes.c_uint),
            ctypes.c_uint,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_void_p),
        ]
        lib.kiln_test_free_string.argtypes = [ctypes.c_void_p]
        _LIBRARY = lib
    return _LIBRARY


class KernelError(Exception):
    """A launch failed: a bad configuration, a raise in the kernel, a deadlock."""


class CompileError(Exception):
    """The module did not compile; the message holds Kiln's diagnostics."""


_MACHINE_TYPES = {
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "u8": ctypes.c_uint8,
    "u16": ctypes.c_uint16,
    "u32": ctypes.c_uint32,
    "u64": ctypes.c_uint64,
    "f16": ctypes.c_uint16,  # packed from np.float16 bits
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "ptr": ctypes.c_void_p,
}


def _array_type_name(array):
    """Numba's name for the type of a NumPy array argument."""
    if array.dtype.fields is not None:
        return None  # records match by structure (see _matches)
    layout = "C" if array.flags.c_contiguous else "F" if array.flags.f_contiguous else "A"
    return array.dtype.name, array.ndim, layout


def _scalar_kinds(value):
    if isinstance(value, (bool, np.bool_)):
        return {"bool"}
    if isinstance(value, np.generic):
        return {value.dtype.name}
    if isinstance(value, int):
        return {"int64"}
    if isinstance(value, float):
        return {"float64"}
    if isinstance(value, complex):
        return {"complex128"}
    return set()


def _parse_array_type(text):
    # "array(float32, 1d, C)"
    inner = text[len("array(") : -1]
    dtype, ndim, layout = [part.strip() for part in inner.rsplit(",", 2)]
    return dtype, int(ndim[:-1]), layout


def _matches(type_name, value):
    if type_name.startswith("array("):
        if not isinstance(value, np.ndarray):
            return False
        dtype, ndim, layout = _parse_array_type(type_name)
        if value.ndim != ndim:
            return False
        if dtype.startswith("Record("):
            if value.dtype.fields is None:
                return False
        elif value.dtype.name != dtype:
            return False
        if layout == "C":
            return value.flags.c_contiguous
        if layout == "F":
            return value.flags.f_contiguous
        return True
    if type_name.startswith(("UniTuple(", "Tuple(")):
        return isinstance(value, tuple)
    return type_name in _scalar_kinds(value)


class _Specialization:
    def __init__(self, module, index, description):
        self.module = module
        self.index = index
        self.name = description["name"]
        self.kind = description["kind"]
        self.args = description["args"]
        self.params = description["params"]

    def matches(self, values):
        return len(values) == len(self.args) and all(
            _matches(t, v) for t, v in zip(self.args, values)
        )

    def _pack(self, values):
        keep = []
        pointers = (ctypes.c_void_p * max(len(self.params), 1))()
        for i, param in enumerate(self.params):
            value = values[param["argument"]]
            for step in param["path"]:
                value = value[step]
            role = param["role"]
            ctype = _MACHINE_TYPES[param["type"]]
            if role == "data" or role == "record":
                cell = ctypes.c_void_p(value.ctypes.data)
            elif role == "shape":
                cell = ctypes.c_int64(value.shape[param["dimension"]])
            elif role == "stride":
                cell = ctypes.c_int64(value.strides[param["dimension"]])
            elif role == "real":
                cell = ctype(complex(value).real)
            elif role == "imag":
                cell = ctype(complex(value).imag)
            elif param["type"] == "f16":
                cell = ctype(int(np.float16(value).view(np.uint16)))
            elif param["type"].startswith(("i", "u")):
                cell = ctype(int(value))
            else:
                cell = ctype(float(value))
            keep.append(cell)
            pointers[i] = ctypes.cast(ctypes.pointer(cell), ctypes.c_void_p)
        return pointers, keep

    def launch(self, grid, block, shared, values):
        pointers, keep = self._pack(values)
        grid3 = (ctypes.c_uint * 3)(*_dim3(grid))
        block3 = (ctypes.c_uint * 3)(*_dim3(block))
        error = ctypes.c_void_p()
        status = _library().kiln_test_launch(
            self.module._handle, self.index, grid3, block3, shared, pointers, ctypes.byref(error)
        )
        del keep
        if status != 0:
            message = ctypes.string_at(error.value).decode()
            _library().kiln_test_free_string(error)
            raise KernelError(message)


def _dim3(value):
    if isinstance(value, int):
        return (value, 1, 1)
    value = tuple(value) + (1,) * (3 - len(value))
    return value


class _Kernel:
    def __init__(self, name, specializations):
        self.name = name
        self.specializations = specializations

    def select(self, values):
        for spec in self.specializations:
            if spec.matches(values):
                return spec
        compiled = "; ".join("(" + ", ".join(s.args) + ")" for s in self.specializations)
        given = ", ".join(type(v).__name__ if not isinstance(v, np.ndarray) else f"{v.dtype}[{v.ndim}d]" for v in values)
        raise TypeError(f"no specialization of {self.name} matches ({given}); compiled: {compiled}")

    def __getitem__(self, config):
        config = tuple(config)
        grid, block = config[0], config[1]
        shared = config[3] if len(config) > 3 else 0

        def launch(*values):
            self.select(values).launch(grid, block, shared, values)

        return launch


class _Ufunc:
    def __init__(self, name, specializations):
        self.name = name
        self.specializations = specializations

    def __call__(self, *operands, out=None):
        arrays = [np.asarray(x) for x in operands]
        for spec in self.specializations:
            dtypes = [_parse_array_type(t)[0] for t in spec.args]
            if all(a.dtype.name == d for a, d in zip(arrays, dtypes[:-1])):
                break
        else:
            raise TypeError(f"no loop of {self.name} for {[a.dtype.name for a in arrays]}")
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        result = np.empty(shape, dtype=dtypes[-1]) if out is None else out
        flat_inputs = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
        flat_out = result.reshape(-1)
        count = flat_out.shape[0]
        threads = 128
        blocks = max(1, math.ceil(count / threads))  # one element per thread
        spec.launch(blocks, threads, 0, (*flat_inputs, flat_out))
        if not np.shares_memory(flat_out, result):  # reshape had to copy a strided out=
            result[...] = flat_out.reshape(shape)
        return result


class _Reduction:
    block = 256

    def __init__(self, name, specializations):
        self.name = name
        self.specializations = specializations

    def __call__(self, values, init=None):
        values = np.asarray(values)
        spec = next(
            (s for s in self.specializations if _parse_array_type(s.args[0])[0] == values.dtype.name),
            None,
        )
        if spec is None:
            raise TypeError(f"no specialization of {self.name} for {values.dtype}")
        if values.size == 0:
            return values.dtype.type(0 if init is None else init)
        use_init = init is not None
        current = values.reshape(-1)
        while True:
            blocks = max(1, min(math.ceil(current.shape[0] / self.block), 64))
            partials = np.empty(blocks, dtype=values.dtype)
            spec.launch(blocks, self.block, 0, (current, partials, values.dtype.type(init or 0), use_init))
            use_init = False
            if blocks == 1:
                return partials[0]
            current = partials


class CompiledModule:
    def __init__(self, path):
        self._work = tempfile.TemporaryDirectory(prefix="kiln-cpu-")
        error = ctypes.c_void_p()
        handle = _library().kiln_test_compile(
            str(path).encode(), self._work.name.encode(), ctypes.byref(error)
        )
        if not handle:
            message = ctypes.string_at(error.value).decode()
            _library().kiln_test_free_string(error)
            raise CompileError(message)
        self._handle = handle
        descriptions = json.loads(_library().kiln_test_describe(handle))
        grouped = {}
        for index, description in enumerate(descriptions):
            spec = _Specialization(self, index, description)
            grouped.setdefault((spec.name, spec.kind), []).append(spec)
        self._callables = {}
        for (name, kind), specs in grouped.items():
            wrapper = {"kernel": _Kernel, "ufunc": _Ufunc, "reduction": _Reduction}[kind]
            self._callables[name] = wrapper(name, specs)

    def __getattr__(self, name):
        try:
            return self.__dict__["_callables"][name]
        except KeyError:
            raise AttributeError(name) from None


def compile_module(path):
    return CompiledModule(path)


def compile_source(source, directory, name="kernels"):
    """Writes `source` to directory/name.py and compiles it."""
    path = pathlib.Path(directory) / f"{name}.py"
    path.write_text(source)
    return CompiledModule(path)
