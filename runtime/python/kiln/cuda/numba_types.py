"""Numba's type objects as `numba.cuda` re-exports them (`float32`, `intc`,
`void`, ...), for signatures written as objects rather than text::

    @cuda.jit(cuda.void(cuda.float32[::1], cuda.int32))   # the kernel @cuda.jit("void(float32[::1], int32)") makes

Kiln's compiler reads signatures as text. These objects print as Numba's do
(`str(cuda.intc)` is "int32", `str(cuda.float32[:, ::1])` is
"array(float32, 2d, C)") and carry what kiln.dispatcher reads to write them
out (a signature's `args` and `return_type`, an array type's `dtype`, `ndim`
and `layout`), so a kernel declared either way is the same kernel. They
describe types and nothing more: as in Numba, calling a scalar type with a
value converts it (`cuda.float32(1.5)` is np.float32(1.5)), and calling a
type with types makes a signature.
"""

import builtins

import numpy as np

__all__ = [
    "b1",
    "bfloat16",
    "bool",
    "bool_",
    "boolean",
    "byte",
    "c8",
    "c16",
    "char",
    "complex64",
    "complex128",
    "deferred_type",
    "double",
    "f4",
    "f8",
    "float16",
    "float32",
    "float64",
    "i1",
    "i2",
    "i4",
    "i8",
    "int8",
    "int16",
    "int32",
    "int64",
    "int_",
    "intc",
    "intp",
    "long_",
    "longlong",
    "none",
    "optional",
    "short",
    "size_t",
    "ssize_t",
    "u1",
    "u2",
    "u4",
    "u8",
    "uchar",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintc",
    "uintp",
    "ulong",
    "ulonglong",
    "ushort",
    "void",
]


class _Type:
    """A Numba type by the name Numba prints for it. Types that print alike
    are equal, as Numba's (interned) types are."""

    def __init__(self, name):
        self.name = name

    @property
    def key(self):
        return self.name

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return type(self) is type(other) and self.key == other.key

    def __hash__(self):
        return hash((type(self), self.key))

    def __getitem__(self, subscript):
        """`float32[:, ::1]`: the array type Numba's subscript makes."""
        ndim, layout = _array_spec(subscript)
        return _Array(self, ndim, layout)

    def __call__(self, *args):
        """As Numba: one value converts to this type; types (or no
        arguments) make the signature of a function returning this type."""
        if len(args) == 1 and not isinstance(args[0], _Type):
            return self.cast_python_value(args[0])
        return _Signature(self, args)

    def cast_python_value(self, value):
        raise TypeError(f"{self} has no host values to convert {value!r} to")


def _exported(type_object, name):
    """`type_object`, named as kiln.cuda exports it: kiln.host_values names
    a module's global by __module__ and __name__ for the compiler, so a
    kernel may read a type the module chose at import (`DTYPE =
    getattr(cuda, name)`)."""
    type_object.__module__ = "kiln.cuda"
    type_object.__name__ = name
    return type_object


class _Number(_Type):
    """A scalar whose host values are NumPy's (or Python's bool), where
    NumPy has the type."""

    def __init__(self, name, bitwidth, convert=None):
        super().__init__(name)
        self.bitwidth = bitwidth
        self._convert = convert

    def cast_python_value(self, value):
        if self._convert is None:
            return super().cast_python_value(value)
        return self._convert(value)


def _numpy_scalar(name, bitwidth):
    return _exported(_Number(name, bitwidth, getattr(np, name)), name)


def _array_spec(subscript):
    """(ndim, layout) of `dtype[subscript]` by Numba's rule: `::1` first is
    Fortran order, `::1` last is C order (first wins), otherwise any layout."""

    def bare_slice(item):
        return isinstance(item, slice) and item.start is None and item.stop is None

    if isinstance(subscript, (tuple, list)) and subscript and all(map(bare_slice, subscript)):
        if subscript[0].step == 1:
            return len(subscript), "F"
        return len(subscript), "C" if subscript[-1].step == 1 else "A"
    if bare_slice(subscript):
        return 1, "C" if subscript.step == 1 else "A"
    # Numba's error, for code that catches it.
    raise KeyError(f"Can only index numba types with slices with no start or stop, got {subscript}.")


class _Array(_Type):
    """`float32[::1]`: an array type, printed as Numba prints it."""

    def __init__(self, dtype, ndim, layout):
        super().__init__(f"array({dtype}, {ndim}d, {layout})")
        self.dtype = dtype
        self.ndim = ndim
        self.layout = layout

    @property
    def key(self):
        return self.dtype, self.ndim, self.layout

    def __repr__(self):
        return f"Array({self.dtype}, {self.ndim}, {self.layout!r}, False, aligned=True)"

    def __getitem__(self, subscript):
        raise TypeError(f"{self}[...]: Numba has no arrays of arrays; the dtype of an array type is a scalar "
                        "or record type")


class _Signature:
    """`void(float32[::1], int32)`: argument types and a return type, as
    Numba's typing.Signature holds them. Not callable, so that `cuda.jit`
    takes it for a signature rather than for the function to compile."""

    __slots__ = ("args", "return_type", "recvr", "pysig")

    def __init__(self, return_type, args):
        self.return_type = return_type
        self.args = tuple(args)
        self.recvr = None
        self.pysig = None

    def __eq__(self, other):
        return (isinstance(other, _Signature) and self.args == other.args
                and self.return_type == other.return_type)

    def __hash__(self):
        return hash((self.args, self.return_type))

    def __repr__(self):
        return f"{self.args} -> {self.return_type}"

    def is_method(self):
        return False


class _Optional(_Type):
    """`optional(float32)`: a value of the type, or None."""

    def __init__(self, typ):
        if isinstance(typ, (_Optional, _NoneType)):
            raise TypeError(f"optional({typ}): the type is already one that may be None")
        super().__init__(f"OptionalType({typ})")
        self.type = typ

    @property
    def key(self):
        return self.type


class _DeferredType(_Type):
    """`deferred_type()`: a type named now and defined later (for types that
    refer to themselves); each is a type of its own until defined."""

    def __init__(self):
        super().__init__(f"DeferredType#{id(self)}")
        self._defined = None

    @property
    def key(self):
        return id(self)

    def get(self):
        if self._defined is None:
            raise RuntimeError("deferred type not defined")
        return self._defined

    def define(self, typ):
        if self._defined is not None:
            raise TypeError("deferred type already defined")
        if not isinstance(typ, _Type):
            raise TypeError(f"arg is not a Type; got: {type(typ)}")
        self._defined = typ


class _NoneType(_Type):
    """`none` (and `void`, the same type): what a kernel returns."""


optional = _Optional
deferred_type = _DeferredType

boolean = b1 = bool = bool_ = _exported(_Number("bool", 8, builtins.bool), "bool")
int8 = i1 = char = _numpy_scalar("int8", 8)
int16 = i2 = short = _numpy_scalar("int16", 16)
int32 = i4 = intc = _numpy_scalar("int32", 32)
int64 = i8 = int_ = intp = long_ = longlong = ssize_t = _numpy_scalar("int64", 64)
uint8 = u1 = byte = uchar = _numpy_scalar("uint8", 8)
uint16 = u2 = ushort = _numpy_scalar("uint16", 16)
uint32 = u4 = uintc = _numpy_scalar("uint32", 32)
uint64 = u8 = uint = uintp = ulong = ulonglong = size_t = _numpy_scalar("uint64", 64)
float16 = _numpy_scalar("float16", 16)
float32 = f4 = _numpy_scalar("float32", 32)
float64 = f8 = double = _numpy_scalar("float64", 64)
complex64 = c8 = _numpy_scalar("complex64", 64)
complex128 = c16 = _numpy_scalar("complex128", 128)
bfloat16 = _exported(_Number("__nv_bfloat16", 16), "bfloat16")
none = void = _exported(_NoneType("none"), "void")
