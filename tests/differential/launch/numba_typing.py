"""Numba's types of the operations programs are made of, and the limits
their values keep to. Types are Numba's names ("int32", "float16",
"complex128", "bool") or, for tuples, Python tuples of them.

They come from Numba's own typing context: its CPU target, which types
every operation used here as the CUDA target does, and for float16, whose
rules the CPU target lacks, a table of the CUDA target's (the unit tests
check both against the CUDA target). The CUDA target is not imported, so
that the generator also loads under Numba's simulator."""

import functools
import operator

import numpy as np
from numba.core import types as numba_types
from numba.core.registry import cpu_target

from .vocabulary import COMPLEX_DTYPES, INT_DTYPES

_TYPING = cpu_target.typing_context
_TYPING.refresh()
OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "//": operator.floordiv, "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift,
             "&": operator.and_, "|": operator.or_, "^": operator.xor, "<": operator.lt,
             "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
             "neg": operator.neg, "~": operator.invert, "not": operator.not_}
_BUILTINS = {"min": min, "max": max, "abs": abs, "complex": complex}
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def _numba_type(name):
    return numba_types.boolean if name == "bool" else getattr(numba_types, name)


def _type_name(numba_type):
    return "bool" if isinstance(numba_type, numba_types.Boolean) else str(numba_type)


# Numba's CUDA target converts a float16 and another number to one type
# first: float16 with float16, int8 or bool; float32 with float32, int16 or
# uint8; float64 with any wider integer or float64.
_FLOAT16_PARTNERS = {"float16": "float16", "int8": "float16", "bool": "float16",
                     "float32": "float32", "int16": "float32", "uint8": "float32",
                     "float64": "float64", "int32": "float64", "int64": "float64", "uint16": "float64",
                     "uint32": "float64", "uint64": "float64"}


def _float16_signature(op, operands):
    """Numba's CUDA typing of `op` over operands one of which is float16
    (the CPU target has no float16): ((converted operands), result)."""
    if op in ("neg", "abs"):
        return ("float16",), "float16"
    if op in ("min", "max"):
        return (("float16", "float16"), "float16") if operands == ("float16", "float16") else None
    if op not in ("+", "-", "*", "/", "//", "%") + COMPARISONS or len(operands) != 2:
        return None
    other = operands[1] if operands[0] == "float16" else operands[0]
    common = _FLOAT16_PARTNERS.get(other)
    if common is None:
        return None
    if op in COMPARISONS:
        return (common, common), "bool"
    # Floor division and modulo of float16 compute in float32.
    if op in ("//", "%") and common == "float16":
        return ("float32", "float32"), "float32"
    return (common, common), common


@functools.lru_cache(maxsize=None)
def signature(op, *operands):
    """((the types the operands are converted to), the result type) of `op`
    in Numba, or None where Numba rejects it."""
    if any(isinstance(o, tuple) or o is None for o in operands):
        return None
    if "float16" in operands:
        return _float16_signature(op, operands)
    function = OPERATORS.get(op) or _TYPING.resolve_value_type(_BUILTINS[op])
    try:
        found = _TYPING.resolve_function_type(function, tuple(_numba_type(o) for o in operands), {})
    except Exception:
        return None
    if found is None:
        return None
    converted = found.args
    if len(converted) == 1 and isinstance(converted[0], numba_types.BaseTuple) and len(operands) > 1:
        converted = converted[0].types  # min and max take theirs as one star argument
    return tuple(_type_name(a) for a in converted), _type_name(found.return_type)


def kind_of(type_name):
    if isinstance(type_name, tuple):
        return "tuple"
    if type_name == "bool":
        return "bool"
    if type_name in INT_DTYPES:
        return "int"
    return "complex" if type_name in COMPLEX_DTYPES else "float"


@functools.lru_cache(maxsize=None)
def int_limits(type_name):
    if type_name == "bool":
        return 0, 1
    info = np.iinfo(type_name)
    return int(info.min), int(info.max)


MANTISSA_BITS = {"float16": 11, "float32": 24, "float64": 53, "complex64": 24, "complex128": 53}
# Floats stay well inside every type's range: float16 values below this.
FLOAT16_LIMIT = 60000.0
FLOAT_LIMIT = 1e15
# Signed integer results stay below this magnitude, far from int64's
# limits (Numba's signed arithmetic may not overflow: LLVM marks it nsw).
INT_LIMIT = 1 << 40


def fits_mantissa(magnitude, fraction_bits, type_name):
    """Whether every multiple of 2**-fraction_bits up to `magnitude` is
    exact in the float type."""
    if fraction_bits is None or magnitude >= FLOAT_LIMIT:
        return False
    return magnitude * 2.0 ** fraction_bits < 2.0 ** MANTISSA_BITS[type_name]
