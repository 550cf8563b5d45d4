"""Building expressions: each builder returns the node, typed as Numba
types it and with the range of its values, or None where Numba rejects it
or its meaning would not be single (an overflow, a zero divisor, an
inexact product, ...)."""

import math

from .expressions import Binary, Call, Cast, Choose, Const, Range, Unary, converted_range
from .numba_typing import (COMPARISONS, FLOAT16_LIMIT, FLOAT_LIMIT, INT_LIMIT, fits_mantissa, int_limits,
                           kind_of, signature)
from .vocabulary import COMPLEX_DTYPES


def _is_power_of_two(expr):
    return isinstance(expr, Const) and expr.type != "bool" and expr.value != 0 and \
        math.log2(abs(expr.value)).is_integer()


def _integer_result(found, result):
    """`found` as a value of the integer type `result`: unsigned arithmetic
    wraps, as defined; signed may not overflow, and stays small."""
    lo, hi = int_limits(result)
    if lo <= found.lo and found.hi <= hi:
        if lo < 0 and found.magnitude > INT_LIMIT:
            return None
        return Range(int(found.lo), int(found.hi))
    return Range(lo, hi) if lo == 0 else None


def _bitwise_range(op, a, b):
    if op == "&" and (a.lo >= 0 or b.lo >= 0):
        return Range(0, min(x.hi for x in (a, b) if x.lo >= 0))
    bits = max(int(abs(v)).bit_length() for v in (a.lo, a.hi, b.lo, b.hi))
    if a.lo >= 0 and b.lo >= 0:
        return Range(0, (1 << bits) - 1)
    return Range(-(1 << bits), (1 << bits) - 1)


def _integer_range(op, a, b):
    a_lo, a_hi, b_lo, b_hi = int(a.lo), int(a.hi), int(b.lo), int(b.hi)
    if op == "+":
        return Range(a_lo + b_lo, a_hi + b_hi)
    if op == "-":
        return Range(a_lo - b_hi, a_hi - b_lo)
    if op == "*":
        corners = [x * y for x in (a_lo, a_hi) for y in (b_lo, b_hi)]
        return Range(min(corners), max(corners))
    if op in ("//", "%"):
        if b_lo <= 0 <= b_hi:
            return None
        if op == "//":
            corners = [x // y for x in (a_lo, a_hi) for y in (b_lo, b_hi)]
            return Range(min(corners), max(corners))
        if b_lo > 0:
            return Range(0, min(b_hi - 1, a_hi) if a_lo >= 0 else b_hi - 1)
        return Range(b_lo + 1, 0)
    if op in ("&", "|", "^"):
        return _bitwise_range(op, a, b)
    if op == "<<":
        if b_lo < 0 or b_hi > 15:
            return None
        corners = [a_lo, a_hi, a_lo << 15, a_hi << 15]
        return Range(min(corners), max(corners))
    if op == ">>":
        if b_lo < 0 or b_hi > 63:
            return None
        return Range(min(a_lo, 0), max(a_hi, 0))
    return None


def _float_range(op, a, b, result, left, right):
    bits = None if a.fraction_bits is None or b.fraction_bits is None else max(a.fraction_bits, b.fraction_bits)
    if op in ("+", "-"):
        found = Range(a.lo + b.lo, a.hi + b.hi) if op == "+" else Range(a.lo - b.hi, a.hi - b.lo)
    elif op == "*":
        # Exact products only: an FMA then rounds as the product and the sum do.
        corners = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        found = Range(min(corners), max(corners))
        power = _is_power_of_two(left) or _is_power_of_two(right)
        bits = None if a.fraction_bits is None or b.fraction_bits is None else a.fraction_bits + b.fraction_bits
        if not power and not fits_mantissa(found.magnitude, bits, result):
            return None
        if result in COMPLEX_DTYPES and not fits_mantissa(2 * found.magnitude, bits, result):
            return None
    elif op in ("/", "//", "%"):
        if b.lo <= 0 <= b.hi or result in COMPLEX_DTYPES:
            return None
        corners = [x / y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        if op == "/":
            found, bits = Range(min(corners), max(corners)), None
        elif op == "//":
            found, bits = Range(math.floor(min(corners)) - 1, math.floor(max(corners)) + 1), 0
        else:
            found = Range(min(0.0, b.lo), max(0.0, b.hi))
    else:
        return None
    if result in COMPLEX_DTYPES and op in ("+", "-"):
        found = Range(min(found.lo, 0.0), max(found.hi, 0.0))
    limit = FLOAT16_LIMIT if result == "float16" else FLOAT_LIMIT
    if found.magnitude > limit:
        return None
    if not fits_mantissa(found.magnitude, bits, result):
        bits = None
    return Range(float(found.lo), float(found.hi), bits)


def binary(op, left, right):
    """`left op right`: arithmetic, a comparison, or `and`/`or` of bools."""
    if left is None or right is None:
        return None
    if op in ("and", "or"):
        if left.type != "bool" or right.type != "bool":
            return None
        node = Binary(op, left, right, ("bool", "bool"))
        node.type, node.range = "bool", Range(0, 1)
        return node
    found = signature(op, left.type, right.type)
    if found is None:
        return None
    (left_type, right_type), result = found
    a = converted_range(left.range, left.type, left_type)
    b = converted_range(right.range, right.type, right_type)
    if a is None or b is None:
        return None
    if op in COMPARISONS:
        value_range = Range(0, 1)
    elif kind_of(result) == "int":
        value_range = _integer_range(op, a, b)
        value_range = value_range and _integer_result(value_range, result)
    elif kind_of(result) in ("float", "complex"):
        value_range = _float_range(op, a, b, result, left, right)
    else:
        return None
    if value_range is None:
        return None
    node = Binary(op, left, right, (left_type, right_type))
    node.type, node.range = result, value_range
    return node


def unary(op, operand):
    """`-x`, `~x`, `abs(x)` or `not x`."""
    if operand is None:
        return None
    found = signature(op, operand.type)
    if found is None:
        return None
    (converted,), result = found
    source = converted_range(operand.range, operand.type, converted)
    kind = kind_of(result)
    if source is None or kind_of(operand.type) == "bool" and op != "not":
        return None
    if op == "not":
        value_range = Range(0, 1)
    elif kind == "complex":
        value_range = Range(-source.hi, -source.lo, source.fraction_bits) if op == "neg" else None
    elif op == "abs":
        if source.lo >= 0:
            value_range = source
        elif source.hi <= 0:
            value_range = Range(-source.hi, -source.lo, source.fraction_bits)
        else:
            value_range = Range(0 * source.lo, source.magnitude, source.fraction_bits)
    elif op == "neg":
        value_range = Range(-source.hi, -source.lo, source.fraction_bits)
    elif op == "~" and kind == "int":
        lo, hi = int_limits(result)
        value_range = Range(hi - source.hi, hi - source.lo) if lo == 0 else Range(-source.hi - 1, -source.lo - 1)
    else:
        return None
    if value_range is not None and kind == "int":
        value_range = _integer_result(value_range, result)
    if value_range is None:
        return None
    node = Unary(op, operand)
    node.type, node.range = result, value_range
    return node


def cast(dtype, operand):
    """`np.<dtype>(operand)`, where that conversion has one meaning."""
    if operand is None or kind_of(operand.type) == "tuple" or kind_of(operand.type) == "complex":
        return None
    if dtype in COMPLEX_DTYPES or dtype == "bool":
        return None
    node = Cast(dtype, operand)
    return node if node.range is not None else None


def builtin(name, arguments):
    """`min(a, b)`, `max(a, b)` or `complex(re, im)`."""
    if any(a is None for a in arguments):
        return None
    if name == "complex" and any(kind_of(a.type) not in ("int", "float") for a in arguments):
        return None
    found = signature(name, *(a.type for a in arguments))
    if found is None:
        return None
    converted, result = found
    if name in ("min", "max") and (kind_of(result) == "complex" or len(set(converted)) != 1):
        return None
    sources = [converted_range(a.range, a.type, t) for a, t in zip(arguments, converted)]
    if name == "complex":
        sources = [converted_range(a.range, a.type, "float64") for a in arguments]
    if any(s is None for s in sources):
        return None
    bits = None if any(s.fraction_bits is None for s in sources) else max(s.fraction_bits for s in sources)
    if name == "min":
        value_range = Range(min(s.lo for s in sources), min(s.hi for s in sources), bits)
    elif name == "max":
        value_range = Range(max(s.lo for s in sources), max(s.hi for s in sources), bits)
    else:
        value_range = Range(min(min(s.lo for s in sources), 0.0), max(max(s.hi for s in sources), 0.0), bits)
    node = Call(name, list(arguments), converted)
    node.type, node.range = result, value_range
    return node


def choose(test, then, otherwise):
    """`(then if test else otherwise)`, the branches of one type."""
    if test is None or then is None or otherwise is None or test.type != "bool":
        return None
    if then.type != otherwise.type:
        otherwise = cast(then.type, otherwise) if kind_of(then.type) in ("int", "float") else None
        if otherwise is None:
            return None
    return Choose(test, then, otherwise)
