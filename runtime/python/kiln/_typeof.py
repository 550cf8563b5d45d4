"""The Numba signature type of a launch argument, as Numba's typeof gives it,
spelled as signature strings spell it:

    np.zeros(4, np.float32)          float32[::1]
    np.zeros((4, 4), order="F")      float64[::1, :]
    a[::2]                           int32[:]
    7, 2.5, 1j, True                 int64, float64, complex128, boolean
    np.float32(2)                    float32
    (1, 2), (1, 2.5)                 UniTuple(int64, 2), Tuple(int64, float64)
"""

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


def _dtype_name(dtype, where):
    name = _SCALAR_NAMES.get(np.dtype(dtype).name)
    if name is None:
        raise UntypableArgument(f"{where} has dtype {dtype}, which Kiln cannot specialize a kernel for "
                                "on demand; give the kernel a signature")
    return name


def _array_type(value, where):
    dtype = _dtype_name(value.dtype, where)
    ndim = len(value.shape)
    if ndim == 0:
        raise UntypableArgument(f"{where} is a 0-d array; pass a 1-element array or a scalar")
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
    if isinstance(value, (bool, np.bool_)):
        return ("scalar", "bool")
    if isinstance(value, np.ndarray):
        text = signature_type(value, where)
        layout = "C" if text.endswith("::1]") else "F" if "[::1," in text else "A"
        return ("array", _scalar_descriptor(_dtype_name(value.dtype, where)), value.ndim, layout,
                not value.flags.writeable)
    if isinstance(value, tuple):
        return ("tuple", tuple(dispatch_descriptor(item, f"{where}[{i}]") for i, item in enumerate(value)))
    text = signature_type(value, where)
    if "[" in text:  # a device array: its layout, never read-only
        dtype, _, dims = text.partition("[")
        layout = "C" if dims.endswith("::1]") else "F" if dims.startswith("::1,") else "A"
        return ("array", _scalar_descriptor(dtype), dims.count(",") + 1, layout, False)
    return _scalar_descriptor(text)


def _scalar_descriptor(name):
    return ("scalar", "bool" if name == "boolean" else name)


def signature_type(value, where="an argument"):
    """The signature type string of `value`; UntypableArgument if none."""
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, np.generic):
        return _dtype_name(value.dtype, where)
    if isinstance(value, numbers.Integral):
        return "int64" if -(2**63) <= value < 2**63 else "uint64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, complex):
        return "complex128"
    if isinstance(value, tuple):
        elements = [signature_type(item, f"{where}[{i}]") for i, item in enumerate(value)]
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
