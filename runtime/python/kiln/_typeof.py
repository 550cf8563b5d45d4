"""The Numba signature type of a launch argument, as Numba's typeof gives it,
spelled as signature strings spell it:

    np.zeros(4, np.float32)          float32[::1]
    np.zeros((4, 4), order="F")      float64[::1, :]
    a[::2]                           int32[:]
    7, 2.5, 1j, True                 int64, float64, complex128, boolean
    np.float32(2)                    float32
    (1, 2), (1, 2.5)                 UniTuple(int64, 2), Tuple(int64, float64)
    Color.RED, Shape.CIRCLE          EnumMember('Color', int64), IntEnumMember('Shape', int64)
    np.zeros(4, [("x", "f8"), ("n", "i4")])
                                     Record([("x", {"type": float64, "offset": 0}),
                                             ("n", {"type": int32, "offset": 8})], 12, False)[::1]

A structured dtype is spelled with numba.types.Record, as numba.from_dtype
makes it; a structured scalar (np.void, np.record) is the record itself. An
enum member's type names its class, as Kiln's signatures spell it (Numba's
EnumMember takes the class itself).
"""

import enum
import numbers

import numpy as np

_SCALAR_NAMES = {
    "bool": "boolean",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}


class UntypableArgument(TypeError):
    """A value no kernel signature can describe."""


def _untypable_dtype(dtype, where):
    return UntypableArgument(f"{where} has dtype {dtype}, which Kiln cannot specialize a kernel for "
                             "on demand; give the kernel a signature")


def _char_sequence(dtype):
    """(signature spelling, Numba name) of a fixed-width string dtype (S12:
    CharSeq(12), [char x 12]; U12: UnicodeCharSeq(12), [unichr x 12]), or
    None."""
    if dtype.kind == "S" and dtype.itemsize:
        return f"CharSeq({dtype.itemsize})", f"[char x {dtype.itemsize}]"
    if dtype.kind == "U" and dtype.itemsize and dtype.isnative:
        count = dtype.itemsize // 4
        return f"UnicodeCharSeq({count})", f"[unichr x {count}]"
    return None


def _datetime(dtype):
    """(signature spelling, Numba name) of a datetime64 or timedelta64 dtype
    of one unit (M8[D]: NPDatetime('D'), datetime64[D]), or None."""
    if dtype.kind not in "Mm" or not dtype.isnative:
        return None
    unit, count = np.datetime_data(dtype)
    if count != 1:
        return None
    unit = "" if unit == "generic" else unit
    maker, name = ("NPDatetime", "datetime64") if dtype.kind == "M" else ("NPTimedelta", "timedelta64")
    return f"{maker}({unit!r})", f"{name}[{unit}]"


def _record_fields(dtype, where):
    """[(name, (signature spelling, Numba name), shape, offset)] of a
    structured dtype whose fields are scalars, arrays of scalars (shape ()
    for a scalar) or fixed-width strings."""
    fields = []
    for name in dtype.names:
        field_dtype, offset = dtype.fields[name][:2]
        shape = ()
        if field_dtype.subdtype is not None:
            field_dtype, shape = field_dtype.subdtype
        chars = _char_sequence(field_dtype)
        if chars is not None and not shape:
            fields.append((name, chars, shape, offset))
            continue
        scalar = _SCALAR_NAMES.get(field_dtype.name)
        if scalar is None or not field_dtype.isnative:
            raise _untypable_dtype(dtype, where)
        fields.append((name, (scalar, "bool" if scalar == "boolean" else scalar), shape, offset))
    return fields


def _field_type(names, shape, signature):
    """A field's type as a signature spells it (NestedArray(int16, (3,))),
    or as Numba names it (nestedarray(int16, (3,)))."""
    if signature:
        return f"NestedArray({names[0]}, {tuple(shape)})" if shape else names[0]
    return f"nestedarray({names[1]}, {tuple(shape)})" if shape else names[1]


def _dtype_name(dtype, where):
    """The signature spelling of an element dtype: a scalar type's name, or
    numba.types.Record(...) for a structured dtype."""
    dtype = np.dtype(dtype)
    if dtype.names:
        fields = ", ".join(f"({name!r}, {{'type': {_field_type(names, shape, True)}, "
                           f"'offset': {offset}}})"
                           for name, names, shape, offset in _record_fields(dtype, where))
        return f"Record([{fields}], {dtype.itemsize}, {dtype.isalignedstruct})"
    special = _char_sequence(dtype) or _datetime(dtype)
    if special is not None:
        return special[0]
    name = _SCALAR_NAMES.get(dtype.name)
    if name is None:
        raise _untypable_dtype(dtype, where)
    return name


def _element_descriptor(dtype, where):
    """("scalar", name), ("record", key) as kiln._types keys records, or
    ("chars", Numba's name) for a fixed-width string."""
    dtype = np.dtype(dtype)
    if dtype.names:
        fields = ",".join(f"{name}[type={_field_type(names, shape, False)};offset={offset}]"
                          for name, names, shape, offset in _record_fields(dtype, where))
        return ("record", f"Record({fields};{dtype.itemsize}")
    chars = _char_sequence(dtype)
    if chars is not None:
        return ("chars", chars[1])
    datetime = _datetime(dtype)
    if datetime is not None:
        return ("datetime", datetime[1])
    return _scalar_descriptor(_dtype_name(dtype, where))


def _array_type(value, where):
    dtype = _dtype_name(value.dtype, where)
    ndim = len(value.shape)
    if ndim == 0:
        # No slice syntax for it: Numba's name of the type.
        return f"Array({dtype}, 0, 'C')"
    c_contiguous = value.flags["C_CONTIGUOUS"]
    f_contiguous = value.flags["F_CONTIGUOUS"]
    dims = [":"] * ndim
    if c_contiguous:
        dims[-1] = "::1"
    elif f_contiguous:
        dims[0] = "::1"
    return f"{dtype}[{', '.join(dims)}]"


def dispatch_descriptor(value, where="an argument"):
    """What kiln._types.descriptor makes of the manifest type of `value`, so
    that a call's types compare with a built kernel's:
    ("array", ("scalar", "float32"), 1, "C", False), ("scalar", "int64"),
    ("tuple", (...)). UntypableArgument if none."""
    if isinstance(value, enum.Enum):
        return ("enum", type(value).__name__, isinstance(value, enum.IntEnum),
                dispatch_descriptor(value.value, f"{where}.value"))
    if isinstance(value, (bool, np.bool_)):
        return ("scalar", "bool")
    if isinstance(value, (np.void, np.datetime64, np.timedelta64)):
        return _element_descriptor(value.dtype, where)
    if isinstance(value, tuple):
        elements = tuple(dispatch_descriptor(item, f"{where}[{i}]") for i, item in enumerate(value))
        if is_named_tuple(value):
            return ("namedtuple", type(value).__name__, elements)
        return ("tuple", elements)
    value = _hinted_array(value)
    text = signature_type(value, where)
    readonly = isinstance(value, np.ndarray) and not value.flags.writeable
    if text.startswith("Array("):  # 0-d
        return ("array", _element_descriptor(value.dtype, where), 0, "C", readonly)
    if text.endswith("]"):  # an array (a device array is never read-only)
        dims = text[text.rindex("["):]
        layout = "C" if dims.endswith("::1]") else "F" if dims.startswith("[::1,") else "A"
        return ("array", _element_descriptor(value.dtype, where), dims.count(",") + 1, layout,
                readonly)
    return _scalar_descriptor(text)


def is_named_tuple(value):
    """Whether `value` is a named tuple (collections.namedtuple,
    typing.NamedTuple), as Numba's typeof tells one: a tuple whose class
    has _fields."""
    return isinstance(value, tuple) and type(value) is not tuple and hasattr(type(value), "_fields")


def _scalar_descriptor(name):
    return ("scalar", "bool" if name == "boolean" else name)


def _hinted_array(value):
    """The array `cuda.In`, `cuda.Out` or `cuda.InOut` holds, which types
    the argument; any other value itself."""
    if not hasattr(value, "_kiln_device_argument"):
        return value
    held = value.value
    return held if hasattr(held, "__cuda_array_interface__") else np.asarray(held)


def signature_type(value, where="an argument"):
    """The signature type string of `value`; UntypableArgument if none."""
    value = _hinted_array(value)
    if isinstance(value, enum.Enum):
        maker = "IntEnumMember" if isinstance(value, enum.IntEnum) else "EnumMember"
        return f"{maker}({type(value).__name__!r}, {signature_type(value.value, f'{where}.value')})"
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, np.generic):  # a NumPy scalar, or a structured one
        return _dtype_name(value.dtype, where)
    if isinstance(value, numbers.Integral):
        return "int64" if -(2**63) <= value < 2**63 else "uint64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, complex):
        return "complex128"
    if isinstance(value, tuple):
        elements = [signature_type(item, f"{where}[{i}]") for i, item in enumerate(value)]
        if is_named_tuple(value):
            # Kiln's spelling: Numba's NamedTuple(types, cls) takes the class.
            listed = "".join(f"{element}, " for element in elements)
            return f"NamedTuple(({listed}), {type(value).__name__!r}, {tuple(type(value)._fields)!r})"
        if not elements:
            return "Tuple(())"
        if len(set(elements)) == 1:
            return f"UniTuple({elements[0]}, {len(elements)})"
        return f"Tuple(({', '.join(elements)}))"
    if hasattr(value, "__cuda_array_interface__") or isinstance(value, np.ndarray):
        if not isinstance(value, np.ndarray) and not hasattr(value, "flags"):
            raise UntypableArgument(f"{where} ({type(value).__name__}) is not an array Kiln knows the "
                                    "layout of; copy it with kiln.cuda.as_cuda_array")
        return _array_type(value, where)
    raise UntypableArgument(f"{where} is a {type(value).__name__}, which kernels cannot take")
