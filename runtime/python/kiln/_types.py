"""Manifest type strings -> the descriptors kiln._runtime.Dispatcher takes.

The manifest spells argument types as Numba prints them; dispatch compares
them in C, as small tuples:

    "float32"                      ("scalar", "float32")
    "array(float32, 2d, C)"        ("array", ("scalar", "float32"), 2, "C", False)
    "array([unichr x 12], 1d, C)"  ("array", ("chars", "[unichr x 12]"), 1, "C", False)
    "datetime64[D]"                ("datetime", "datetime64[D]")
    "uint8*"                       ("pointer", ("scalar", "uint8"))
    "readonly array(int8, 1d, A)"  ("array", ("scalar", "int8"), 1, "A", True)
    "Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True)"
                                   ("record", "Record(s0[...],s1[...];16")
    "UniTuple(int64 x 2)"          ("tuple", (("scalar", "int64"), ("scalar", "int64")))
    "Tuple(int64, float32)"        ("tuple", (("scalar", "int64"), ("scalar", "float32")))
    "Point(int64, float32)"        ("namedtuple", "Point", (("scalar", "int64"), ("scalar", "float32")))
    "Point(int64 x 2)"             ("namedtuple", "Point", (("scalar", "int64"), ("scalar", "int64")))
    "Enum<int64>(Color)"           ("enum", "Color", False, ("scalar", "int64"))
    "IntEnum<int64>(Shape)"        ("enum", "Shape", True, ("scalar", "int64"))
    anything else                  ("unsupported", text)

A record's key is its name without the alignment flag: dispatch matches
NumPy structured dtypes by their fields, offsets and size.
"""

SCALARS = frozenset(
    "bool boolean int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
    "float16 float32 float64 complex64 complex128".split()
)


def split_top_level(text, separator=","):
    """Splits `text` at separators outside brackets."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == separator and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def record_key(text):
    """'Record(...;16;True)' -> 'Record(...;16'."""
    body = text[:-1] if text.endswith(")") else text
    head, _, flag = body.rpartition(";")
    return head if flag in ("True", "False") else body


def _element(text):
    text = text.strip()
    if text in SCALARS:
        return ("scalar", "bool" if text == "boolean" else text)
    if text.startswith("Record("):
        return ("record", record_key(text))
    if text.startswith(("[char x ", "[unichr x ")) and text.endswith("]"):
        return ("chars", text)
    if text.startswith(("datetime64[", "timedelta64[")) and text.endswith("]"):
        return ("datetime", text)
    return ("unsupported", text)


def descriptor(text):
    """The dispatch descriptor of one manifest type string."""
    text = text.strip()
    readonly = False
    if text.startswith("readonly "):
        readonly, text = True, text[len("readonly ") :].strip()
    if text.startswith("array(") and text.endswith(")"):
        parts = split_top_level(text[len("array(") : -1])
        if len(parts) == 3 and parts[1].endswith("d") and parts[1][:-1].isdigit():
            element = _element(parts[0])
            if element[0] != "unsupported" and parts[2] in ("C", "F", "A"):
                return ("array", element, int(parts[1][:-1]), parts[2], readonly)
        return ("unsupported", text)
    if text.startswith("Record("):
        return ("record", record_key(text))
    if text in SCALARS or text.startswith(("datetime64[", "timedelta64[")):
        return _element(text)
    if text.endswith("*") and text[:-1].strip() in SCALARS:
        return ("pointer", _element(text[:-1]))
    if text.startswith(("Enum<", "IntEnum<")) and text.endswith(")") and ">(" in text:
        value, _, class_name = text[text.index("<") + 1 : -1].rpartition(">(")
        return ("enum", class_name, text.startswith("IntEnum<"), descriptor(value))
    maker, paren, rest = text.partition("(")
    if paren and maker.isidentifier() and maker not in _NOT_TUPLES and text.endswith(")"):
        elements = _tuple_elements(rest[:-1])
        if elements is None:
            return ("unsupported", text)
        if maker in ("UniTuple", "Tuple"):
            return ("tuple", elements)
        # Any other name is a named tuple's class, as Numba prints it.
        return ("namedtuple", maker, elements)
    return ("unsupported", text)


# Numba's printed types that take parentheses and are no tuples.
_NOT_TUPLES = frozenset({"Array", "NestedArray", "nestedarray", "omitted", "BoundFunction"})


def _tuple_elements(inner):
    """The element descriptors of a tuple printed as "int64 x 2" or
    "int64, float32"; None if it is neither."""
    parts = split_top_level(inner)
    if len(parts) == 1:
        element, sep, count = parts[0].rpartition(" x ")
        if sep and count.strip().isdigit():
            return tuple(descriptor(element) for _ in range(int(count)))
    return tuple(descriptor(part) for part in parts)


def signature_text(args):
    """'(array(float32, 1d, C), int64)'"""
    return "(" + ", ".join(args) + ")"
