"""The globals a module's host code computes at import, as Kiln's compiler
reads them: a kernel of a module that stays Python may read a NumPy array,
a number or a tuple of them that the module computed when it ran
(`TABLE = np.cos(np.linspace(0, np.pi, 64))`), and the compiler freezes the
value in, as Numba does (an array becomes a read-only constant array).

The dispatcher hands the running program's values to the compiler; `kiln
build` runs kiln.import_host_values, which runs the module and prints its
values as JSON. Values are keyed by the module file's real path:

    {"/abs/pkg/kernels.py": {"TABLE": {"kind": "array", "dtype": "float64",
                                        "shape": [64], "data": "<hex>"}}}
"""

import enum
import hashlib
import os
import struct
import sys
import tempfile
import types

from kiln import _overloads
from kiln._sources import CompiledFromSource, function_file

_INT64 = (-(1 << 63), (1 << 63) - 1)
# NumPy's kinds of the dtypes Kiln compiles: bool, signed, unsigned, float, complex.
_NUMBER_KINDS = "biufc"


def encode(value):
    """The JSON form of one value, or None for anything a kernel cannot
    read (functions, modules, lists, object arrays, ...)."""
    if isinstance(value, bool):
        return {"kind": "bool", "data": bytes([value]).hex()}
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            return None
        return {"kind": "int", "data": struct.pack("=q", value).hex()}
    if isinstance(value, float):
        return {"kind": "float", "data": struct.pack("=d", value).hex()}
    if isinstance(value, complex):
        return {"kind": "complex", "data": struct.pack("=dd", value.real, value.imag).hex()}
    if isinstance(value, str):
        return {"kind": "str", "text": value}
    if isinstance(value, tuple):
        items = [encode(item) for item in value]
        if any(item is None or item["kind"] in ("array", "device_array", "set") for item in items):
            return None
        if type(value) is not tuple and hasattr(type(value), "_fields"):
            # A named tuple (collections.namedtuple, typing.NamedTuple).
            return {"kind": "tuple", "items": items, "class": type(value).__name__,
                    "fields": list(type(value)._fields)}
        return {"kind": "tuple", "items": items}
    if isinstance(value, types.FunctionType):
        # A function numba.extending.overload implements (else host code's).
        return _overloads.encode(value)
    if isinstance(value, (set, frozenset)) and all(isinstance(item, str) for item in value):
        # For the decorators that take one: fastmath={"nsz", "arcp"}.
        return {"kind": "set", "items": [encode(item) for item in sorted(value)]}
    if isinstance(value, type) and issubclass(value, enum.Enum) and value.__members__:
        # An Enum or IntEnum class: its members, whose values must be numbers
        # or tuples of them (aliases included, as in the class's source).
        members = [[name, encode(member.value)] for name, member in value.__members__.items()]
        if any(encoded is None or encoded["kind"] in ("array", "device_array", "str", "set")
               for _, encoded in members):
            return None
        return {"kind": "enum", "name": value.__name__, "int": issubclass(value, enum.IntEnum),
                "members": members}
    if isinstance(value, type) and issubclass(value, tuple) and isinstance(getattr(value, "_fields", None), tuple):
        # A named tuple class (collections.namedtuple, typing.NamedTuple),
        # which kernels call to make one: Point(1, 2), Point(x=1, y=2).
        return {"kind": "namedtuple_class", "name": value.__name__, "fields": list(value._fields)}
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    record_type = _record_type(numpy, value)
    if record_type is not None:
        return record_type
    if isinstance(value, numpy.generic):
        if value.dtype.kind not in _NUMBER_KINDS:
            return None
        native = value.astype(value.dtype.newbyteorder("="))
        return {"kind": "scalar", "dtype": native.dtype.name, "data": native.tobytes().hex()}
    if isinstance(value, numpy.ndarray):
        fields = _record_fields(value.dtype)
        if value.dtype.kind not in _NUMBER_KINDS and fields is None:
            return None
        # Numba types a Fortran-ordered global as F; anything else is copied
        # in C order.
        order = "F" if value.flags.f_contiguous and not value.flags.c_contiguous else "C"
        native = numpy.array(value, dtype=value.dtype.newbyteorder("="), order=order)
        encoded = {"kind": "array", "dtype": native.dtype.name, "shape": list(native.shape),
                   "order": order, "data": native.tobytes(order=order).hex()}
        if fields is not None:
            encoded.update(dtype="record", fields=fields, itemsize=value.dtype.itemsize,
                           aligned=value.dtype.isalignedstruct)
        return encoded
    interface = getattr(value, "__cuda_array_interface__", None)
    if isinstance(interface, dict):
        return _device_array(numpy, interface)
    return None


def _device_array(numpy, interface):
    """A device array (an object with `__cuda_array_interface__`) of
    numbers: kernels capture it by the address of its data, as Numba does,
    so that they read and write the array itself."""
    try:
        dtype = numpy.dtype(interface["typestr"])
        shape = [int(extent) for extent in interface["shape"]]
        address = int(interface["data"][0] or 0)
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    if dtype.kind not in _NUMBER_KINDS or not dtype.isnative:
        return None
    strides = interface.get("strides")
    if strides is None:  # C-contiguous
        strides, step = [], dtype.itemsize
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
    return {"kind": "device_array", "dtype": dtype.name, "shape": shape,
            "strides": [int(stride) for stride in strides], "address": address}


def _record_fields(dtype):
    """[[name, NumPy name of its type, offset], ...] of a structured dtype
    whose fields are numbers, with the field's shape after the offset for a
    field that holds an array of them; None for any other dtype."""
    if dtype.fields is None:
        return None
    fields = []
    for name, (field, offset, *_) in dtype.fields.items():
        shape = ()
        if field.subdtype is not None:
            field, shape = field.subdtype
        if field.kind not in _NUMBER_KINDS or field.fields is not None:
            return None
        fields.append([name, field.newbyteorder("=").name, offset] + ([list(shape)] if shape else []))
    return fields


def _record_type(numpy, value):
    """A structured dtype used as a type, as kernels take one for
    cuda.shared.array(n, dtype=dt): a NumPy dtype, or the Numba Record type
    numba.from_dtype makes of it; None for anything else."""
    if type(value).__name__ == "Record" and type(value).__module__.startswith("numba."):
        value = getattr(value, "dtype", None)
    if not isinstance(value, numpy.dtype) or value.names is None:
        return None
    fields = _record_fields(value)
    if fields is None:
        return None
    return {"kind": "record_type", "fields": fields, "itemsize": value.itemsize,
            "aligned": value.isalignedstruct}


# Where the modules, types and functions kernels may name live.
_SYMBOL_PACKAGES = ("math", "cmath", "numpy", "numba", "kiln", "operator", "cffi")


def symbol(value):
    """The JSON form of a module, type or function kernels use by name, as
    an import would bind it (`numba.cuda`, `numba.float64`, `numpy.int32`,
    `math.sin`), or None."""
    if isinstance(value, types.ModuleType):
        name = value.__name__
    elif (type(value).__module__, type(value).__name__) == ("cffi.api", "FFI"):
        name = "cffi.FFI"  # an FFI object, whose from_buffer kernels call
    elif type(value).__module__.startswith("numba.") and type(value).__module__.endswith(".scalars"):
        name = f"numba.{value}"  # Numba's scalar types print as their names
    elif isinstance(value, type) or callable(value):
        module = getattr(value, "__module__", None)
        # The operator module's functions live in its C half, _operator.
        module = "operator" if module == "_operator" else module
        # numba.cuda's own objects (threadIdx, float32x4, ...) are defined in
        # numba.cuda.stubs, and the simulator's vector types in a module of
        # its own: kernels name them as numba.cuda exports them.
        if module in ("numba.cuda.stubs", "numba.cuda.simulator.vector_types"):
            module = "numba.cuda"
        # Numba's functions live in private modules (numba.core.decorators.njit):
        # kernels name them as Numba's public modules export them.
        elif module and module.startswith("numba."):
            module = next((public for public in ("numba", "numba.cuda")
                           if getattr(sys.modules.get(public), getattr(value, "__name__", ""), None) is value),
                          module)
        name = f"{module}.{getattr(value, '__name__', '')}"
    else:
        return None
    if name.partition(".")[0] not in _SYMBOL_PACKAGES:
        return _source_module(value)
    return {"kind": "symbol", "name": name}


def declared_device(value):
    """The JSON form of what `cuda.declare_device(name, sig, link=...)`
    returned (kiln.decorators.DeclaredDeviceFunction), or None: a function
    in CUDA C/C++ or PTX, its link files made absolute as Numba opens them,
    from the folder the process runs in; code held in memory (`cuda.CUSource`)
    is written to a file named by its content."""
    if (type(value).__module__, type(value).__name__) != ("kiln.decorators", "DeclaredDeviceFunction"):
        return None
    link = value.link or ()
    if isinstance(link, (str, os.PathLike)) or hasattr(link, "data"):
        link = (link,)
    files = []
    for item in link:
        if isinstance(item, (str, os.PathLike)):
            files.append(os.path.abspath(item))
        elif hasattr(item, "data") and _linkable_kind(item):
            files.append(_linked_code_file(item))
        else:
            return None
    return {"kind": "declared_device", "symbol": value.name, "signature": value.signature_text,
            "link": files, "cooperative": bool(value.use_cooperative), "abi": value.abi}


# The file extension of each kind of LinkableCode, by class name: Numba's
# classes say it as `kind`, its simulator's do not.
_LINKABLE_KINDS = {"CUSource": "cu", "PTXSource": "ptx", "Cubin": "cubin", "Fatbin": "fatbin",
                   "Object": "o", "Archive": "a", "LTOIR": "ltoir"}


def _linkable_kind(code):
    kind = getattr(code, "kind", None)
    return kind if isinstance(kind, str) else _LINKABLE_KINDS.get(type(code).__name__)


def _linked_code_file(code):
    """The file holding the code of a LinkableCode (`cuda.CUSource(text)`,
    Kiln's or Numba's), under a name its content gives, so that the same
    code is the same file in every process."""
    data = code.data.encode() if isinstance(code.data, str) else bytes(code.data)
    folder = os.path.join(tempfile.gettempdir(), f"kiln-linked-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.lstat(folder).st_uid != os.getuid():  # another user's: not ours to trust
        folder = tempfile.mkdtemp(prefix="kiln-linked-")
    path = os.path.join(folder, f"{hashlib.sha256(data).hexdigest()[:32]}.{_linkable_kind(code)}")
    if not os.path.exists(path):
        partial = f"{path}.{os.getpid()}.partial"
        with open(partial, "wb") as file:
            file.write(data)
        os.replace(partial, path)
    return path


def _source_module(value):
    """A module of Python source whatever imports it (`from stumpy import
    core` in a package's tests): kernels use its device functions and
    constants as those of a module of their own package."""
    path = getattr(value, "__file__", None) if isinstance(value, types.ModuleType) else None
    if not isinstance(path, str) or not path.endswith(".py"):
        return None
    return {"kind": "module", "name": value.__name__, "file": os.path.realpath(path)}


def module_values(namespace, path=None):
    """{name: JSON form} of the globals in `namespace` a kernel can read,
    and of the kernels and device functions kernel factories of the module
    at `path` made at import (closures), with what they close over."""
    found = {}
    for name, value in list(namespace.items()):
        if name.startswith("__") and name.endswith("__"):
            continue
        if isinstance(value, CompiledFromSource):
            function_path = function_file(value.py_func)
            if not is_closure(value.py_func):
                # `add = cuda.jit(device=True)(plain_add)`: the function compiled.
                found[name] = {"kind": "function", "file": function_path, "name": value.built_name}
            elif function_path == path:
                _encode_closure(name, value.py_func, path, found)
            continue
        encoded = encode(value) or declared_device(value) or symbol(value)
        if encoded is not None:
            found[name] = encoded
    return found


def is_closure(function):
    """Whether `function` is defined inside another function."""
    return "<locals>" in function.__qualname__


def closure_key(function, within=()):
    """What makes two closures one kernel or device function: their code,
    and the values they close over, compared as the compiler freezes them
    (numbers by their bits, arrays by their contents, closures they call
    by their own keys). A factory called again with the same values (a
    kernel made at each call of a host function) then compiles once.
    Another object is compared by identity; the closure the key was made
    from holds it, so no other object takes its id while the key is kept.
    (`within`: the closures whose keys are being made, which a recursive
    closure refers to by depth.)"""
    if function in within:
        return ("recursive", within.index(function))
    cells = function.__closure__ or ()
    # Code objects of one text compare equal whatever file holds them.
    return (function.__code__.co_filename, function.__code__,
            tuple(_value_key(_cell_contents(cell), within + (function,)) for cell in cells))


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _UNBOUND


_UNBOUND = object()


def _value_key(value, within):
    """See closure_key."""
    if isinstance(value, (bool, int, str, bytes, type(None))):
        return (type(value), value)
    if isinstance(value, float):
        return (float, value.hex())  # -0.0 is not 0.0, and a NaN is itself
    if isinstance(value, complex):
        return (complex, value.real.hex(), value.imag.hex())
    if isinstance(value, tuple):
        return (tuple, tuple(_value_key(item, within) for item in value))
    if _device_callable(value) and is_closure(value.py_func):
        return ("closure", type(value), closure_key(value.py_func, within))
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)) and value.dtype.kind in _NUMBER_KINDS:
        contents = numpy.ascontiguousarray(value)
        return (type(value), value.dtype.str, value.shape, value.strides if value.ndim else (),
                hashlib.sha256(contents.tobytes()).digest())
    return ("object", id(value))


def enclosing_name(function):
    """The function or class `function` is defined in: "make_scaler"."""
    return function.__qualname__.rsplit(".", 1)[0].replace(".<locals>", "")


def _encode_closure(name, function, path, found, names=None):
    """Adds the closure `function`, compiled as `name`, and its free
    variables to `found`; a closure it calls is "name__variable", once
    (`names`: id of each closure encoded -> its name), so that recursive
    closures refer to themselves."""
    names = {} if names is None else names
    names[id(function)] = name
    code = function.__code__
    found[name] = {"kind": "closure", "line": code.co_firstlineno, "enclosing": enclosing_name(function),
                   "variables": list(code.co_freevars)}

    def compiled_as(inner, variable):
        if function_file(inner) != path:
            return None  # another module's: compiled when a kernel asks for it
        if id(inner) not in names:
            _encode_closure(f"{name}__{variable}", inner, path, found, names)
        return names[id(inner)]

    encode_free_variables(name, function, path, found, compiled_as)


def encode_free_variables(name, function, path, found, closure_name):
    """Adds to `found`, as "name.variable", the values the closure
    `function` (of the module at `path`, compiled as `name`) closes over:
    what encode() encodes, device functions (see _encode_captured), and
    modules host code made without source as namespaces of such values."""
    for variable, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            continue  # not bound: the compiler names it
        encoded = _encode_captured(value, variable, closure_name)
        if encoded is not None:
            found[f"{name}.{variable}"] = encoded


def _encode_captured(value, variable, closure_name, within=()):
    """The JSON form of `value`, which a closure holds in `variable`, or
    None (`within`: the namespaces it is an attribute of, which it cannot
    hold in turn). A device function is named by the name it is compiled under: its
    own, at the top level of a module; for another closure (of this module,
    or made by a factory of another), closure_name(its function, the
    variable), which has it compiled too, or None where it cannot be."""
    if _device_callable(value):
        inner = value.py_func
        inner_path = function_file(inner)
        if not is_closure(inner):
            # Kiln's own carry the name their build gave them.
            built_name = getattr(value, "built_name", inner.__name__)
            # A function of a class (`@staticmethod @njit def w`) is
            # compiled under its qualified name, "CubicSpline.w".
            if "." in inner.__qualname__:
                built_name = inner.__qualname__
            return {"kind": "function", "file": inner_path, "name": built_name}
        compiled_as = closure_name(inner, variable)
        return None if compiled_as is None else {"kind": "function", "file": inner_path, "name": compiled_as}
    encoded = encode(value) or declared_device(value) or symbol(value)
    if (encoded is None and isinstance(value, types.ModuleType) and getattr(value, "__file__", None) is None
            and value not in within):
        # `mymod = ModuleType("mymod"); mymod.add = add`: kernels read its
        # attributes, frozen as Numba freezes a module's globals.
        members = []
        for attribute, member in list(vars(value).items()):
            if not (attribute.startswith("__") and attribute.endswith("__")):
                encoded_member = _encode_captured(member, f"{variable}__{attribute}", closure_name,
                                                  within + (value,))
                if encoded_member is not None:
                    members.append([attribute, encoded_member])
        encoded = {"kind": "namespace", "name": value.__name__, "members": members}
    return encoded


def _device_callable(value):
    """Whether kernels call `value` as a device function Kiln compiles: its
    own kernels and device functions (a kernel a kernel calls is one there),
    and functions jitted for the CPU (@numba.jit), as Numba compiles them;
    Numba's own (numba.cuda.random's, in the simulator) are Kiln's
    prelude's."""
    if isinstance(value, CompiledFromSource):
        return True
    return _is_numba_cpu_function(value) and value.py_func.__module__ not in PRELUDE_MODULES


# Numba's modules of device functions that Kiln's compiler has in its
# prelude (frontend/prelude): their functions are named, not compiled from
# Numba's source.
PRELUDE_MODULES = frozenset({"numba.cuda.random"})


def _is_numba_cpu_function(value):
    """Whether `value` is a function `@numba.jit` or `@numba.njit` made:
    Numba's CPU dispatcher, told by its class's module (Numba itself is not
    imported here)."""
    return type(value).__module__ == "numba.core.registry" and hasattr(value, "py_func")


def package_values(module):
    """{real path: values} of `module` and of the other loaded modules it
    may import kernels' globals from: those of its top-level package, or,
    for a module in no package, those beside it."""
    path = getattr(module, "__file__", None)
    if not path:
        return {}
    real = os.path.realpath(path)
    found = {real: module_values(vars(module), real)}
    folder = os.path.dirname(os.path.abspath(path))
    in_package = os.path.exists(os.path.join(folder, "__init__.py")) and module.__name__ != "__main__"
    package = module.__name__.partition(".")[0]
    # The packages of the other packages' modules it imports (`from stumpy
    # import core` in a package's tests), whose kernels' globals it reads.
    imported = {encoded["name"].partition(".")[0] for encoded in found[real].values()
                if encoded.get("kind") == "module"}
    for name, other in list(sys.modules.items()):
        other_path = getattr(other, "__file__", None)
        if other is module or not isinstance(other_path, str) or not other_path.endswith(".py"):
            continue
        if name.partition(".")[0] in imported:
            related = True
        elif in_package:
            related = name == package or name.startswith(package + ".")
        else:
            # The cheap test first: most of sys.modules lies elsewhere.
            absolute = other_path if os.path.isabs(other_path) else os.path.abspath(other_path)
            related = absolute.startswith(folder) and os.path.dirname(absolute) == folder
        if related:
            other_real = os.path.realpath(other_path)
            found[other_real] = module_values(vars(other), other_real)
    return found
