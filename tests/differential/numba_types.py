"""Numba's own typing rules, asked while generating programs.

The generator must know the exact Numba type of every expression it
builds: whether `x << y` is valid depends on both being integers, and mixes
that look like integers are not always (uint64 with int64 unify to
float64, and a float converted to an integer out of range has no single
answer). Rather than copy Numba's rules, this asks Numba's typing context,
with a cache. Types are Numba's names: "int64", "uint8", "float32",
"bool", or None for an operation Numba rejects.
"""

import functools
import operator

from numba.core import types
from numba.core.registry import cpu_target

_CONTEXT = cpu_target.typing_context
_CONTEXT.refresh()

_OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
    "-u": operator.neg, "~": operator.invert, "not": operator.not_,
}
_BUILTINS = {"abs": abs, "min": min, "max": max}


def _numba(name):
    return types.boolean if name == "bool" else getattr(types, name)


def _name(numba_type):
    if numba_type is None:
        return None
    if isinstance(numba_type, types.Boolean):
        return "bool"
    if isinstance(numba_type, (types.Integer, types.Float)):
        return str(numba_type)
    return None


@functools.lru_cache(maxsize=None)
def result(op, *operands):
    """The type of `op` applied to operands of the named types."""
    if any(o is None for o in operands):
        return None
    function = _OPERATORS.get(op) or _BUILTINS[op]
    if op in _BUILTINS:
        function = _CONTEXT.resolve_value_type(function)
    try:
        signature = _CONTEXT.resolve_function_type(function, tuple(_numba(o) for o in operands), {})
    except Exception:
        return None
    return _name(signature.return_type) if signature is not None else None


@functools.lru_cache(maxsize=None)
def unify(a, b):
    """The type of a variable or conditional expression that may be either."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    return _name(_CONTEXT.unify_types(_numba(a), _numba(b)))


def kind(name):
    if name is None:
        return None
    if name == "bool":
        return "bool"
    return "float" if name.startswith("float") else "int"
