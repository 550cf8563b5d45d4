"""Expression nodes. Each knows its Numba type, the range of its values
(Range), the launch quantities not shared by every thread that it depends
on (`sources`), how it renders in the kernel and in the host functions
(Renderer), which intrinsics it uses (for coverage) and, for index and
guard arithmetic, its value over every thread at once (`evaluate`, Opaque
where it depends on data). Arithmetic nodes (Binary, Unary, a builtin's
Call) get their type and range from builders.py, which checks them."""

import dataclasses
import math

import numpy as np

from .numba_typing import (COMPARISONS, FLOAT16_LIMIT, FLOAT_LIMIT, OPERATORS, fits_mantissa, int_limits,
                           kind_of)
from .vocabulary import INT_DTYPES, LAUNCH_PARAMETERS, UNIFORM_QUANTITIES, Intrinsic


@dataclasses.dataclass(frozen=True)
class Range:
    """The values an expression may take: an interval (of both parts, for
    a complex), and for floats how many fraction bits they may have (None:
    any; a float product is exact when its operands' bits fit)."""

    lo: float
    hi: float
    fraction_bits: object = 0

    @property
    def magnitude(self):
        return max(abs(self.lo), abs(self.hi))

    def union(self, other):
        bits = None if self.fraction_bits is None or other.fraction_bits is None else \
            max(self.fraction_bits, other.fraction_bits)
        return Range(min(self.lo, other.lo), max(self.hi, other.hi), bits)


class Opaque(Exception):
    """An expression whose value depends on data: it has no value at
    generation time."""


class Renderer:
    """How a program renders: as the kernel (`host` False) or as the njit
    host functions, with `name` the kernel's name."""

    def __init__(self, name, host):
        self.name, self.host = name, host

    def float16(self, text):
        return f"{self.name}_f16({text})"

    def device(self, function):
        return f"{self.name}_{function.suffix}"

    def launch_arguments(self):
        return ", ".join(LAUNCH_PARAMETERS)


class Expr:
    """An expression node. Subclasses set `type`, `range` (None for
    tuples, whose part_range(k) gives each component's) and `sources` (the
    launch quantities, not shared by every thread, its value depends
    on)."""

    type = None
    range = None
    sources = frozenset()

    def children(self):
        return []

    def render(self, r):
        raise NotImplementedError

    def evaluate(self, env):
        raise Opaque()

    @property
    def quantity(self):
        """The launch quantity this expression is exactly, or None."""
        return None

    @property
    def quantities(self):
        """For a tuple, the quantity each component is (None where none)."""
        return None

    def uses(self):
        """(intrinsic name, direct) for every intrinsic read inside: direct
        when the expression is that intrinsic's value (or a component of
        it), not arithmetic over it."""
        return [(name, False) for child in self.children() for name, _ in child.uses()]

    def walk(self):
        yield self
        for child in self.children():
            yield from child.walk()


def _host_convert(r, expr, wanted):
    """The host text of `expr`, converted to `wanted` where Numba's CUDA
    target converts a float16 (or to a float16) before an operation."""
    text = expr.render(r)
    if not r.host or expr.type == wanted or "float16" not in (expr.type, wanted):
        return text
    if wanted == "float16":
        return r.float16(f"np.float64({text})")
    return f"np.{wanted}({text})"


@dataclasses.dataclass(eq=False)
class Const(Expr):
    dtype: str
    value: object

    def __post_init__(self):
        self.type = self.dtype
        if self.type == "bool":
            self.range = Range(int(self.value), int(self.value))
        else:
            bits = 0 if self.type in INT_DTYPES else _fraction_bits(self.value)
            self.range = Range(self.value, self.value, bits)

    def render(self, r):
        return repr(self.value)

    def evaluate(self, env):
        return self.value


def _fraction_bits(value):
    for bits in range(8):
        if float(value * 2 ** bits).is_integer():
            return bits
    return None


@dataclasses.dataclass(eq=False)
class Read(Expr):
    """An intrinsic read inline: `cuda.threadIdx.x`, `cuda.grid(2)`."""

    intrinsic: Intrinsic
    launch: object

    def __post_init__(self):
        self.type = self.intrinsic.type
        if not isinstance(self.type, tuple):
            self.range = self.launch.range_of(self.intrinsic.quantities[0])
        self.sources = frozenset(q for q in self.intrinsic.quantities if q not in UNIFORM_QUANTITIES)

    def render(self, r):
        return self.intrinsic.host if r.host else self.intrinsic.source

    def evaluate(self, env):
        values = tuple(env[q] for q in self.intrinsic.quantities)
        return values if isinstance(self.type, tuple) else values[0]

    @property
    def quantity(self):
        return None if isinstance(self.type, tuple) else self.intrinsic.quantities[0]

    @property
    def quantities(self):
        return self.intrinsic.quantities if isinstance(self.type, tuple) else None

    def part_range(self, k):
        return self.launch.range_of(self.intrinsic.quantities[k])

    def uses(self):
        return [(self.intrinsic.name, True)]


@dataclasses.dataclass(eq=False)
class Var(Expr):
    """A local variable, bound once (by Let or Unpack) to `bound`."""

    name: str
    bound: Expr

    def __post_init__(self):
        self.type, self.range, self.sources = self.bound.type, self.bound.range, self.bound.sources

    def render(self, r):
        return self.name

    def evaluate(self, env):
        value = env.get(self.name)
        if value is None:
            raise Opaque()
        return value

    @property
    def quantity(self):
        return self.bound.quantity

    @property
    def quantities(self):
        return self.bound.quantities

    def part_range(self, k):
        return self.bound.part_range(k)

    def uses(self):
        return self.bound.uses()


@dataclasses.dataclass(eq=False)
class Item(Expr):
    """`t[k]` of a tuple."""

    tuple_expr: Expr
    index: int

    def __post_init__(self):
        self.type = self.tuple_expr.type[self.index]
        self.range = self.tuple_expr.part_range(self.index)
        quantity = self.quantity
        self.sources = self.tuple_expr.sources if quantity is None else \
            frozenset([quantity]) - UNIFORM_QUANTITIES

    def children(self):
        return [self.tuple_expr]

    def render(self, r):
        return f"{self.tuple_expr.render(r)}[{self.index}]"

    def evaluate(self, env):
        return self.tuple_expr.evaluate(env)[self.index]

    @property
    def quantity(self):
        quantities = self.tuple_expr.quantities
        return quantities[self.index] if quantities else None

    def uses(self):
        # Of a built tuple, only this element's intrinsics.
        whole = self.tuple_expr
        while isinstance(whole, Var):
            whole = whole.bound
        return whole.elements[self.index].uses() if isinstance(whole, TupleOf) else whole.uses()


@dataclasses.dataclass(eq=False)
class TupleOf(Expr):
    """A tuple built of scalars: `(i, j)`."""

    elements: list

    def __post_init__(self):
        self.type = tuple(e.type for e in self.elements)
        self.sources = frozenset().union(*(e.sources for e in self.elements))

    def children(self):
        return list(self.elements)

    def render(self, r):
        return "(" + ", ".join(e.render(r) for e in self.elements) + ("," if len(self.elements) == 1 else "") + ")"

    def evaluate(self, env):
        return tuple(e.evaluate(env) for e in self.elements)

    @property
    def quantities(self):
        return tuple(e.quantity for e in self.elements)

    def part_range(self, k):
        return self.elements[k].range

    def uses(self):
        return [use for e in self.elements for use in e.uses()]


@dataclasses.dataclass(eq=False)
class Scalar(Expr):
    """A scalar parameter of the kernel, the same in every thread."""

    name: str
    dtype: str
    value: int

    def __post_init__(self):
        self.type, self.range = self.dtype, Range(self.value, self.value)

    def render(self, r):
        return self.name

    def evaluate(self, env):
        return self.value


@dataclasses.dataclass(eq=False)
class Shape(Expr):
    """`a.shape[d]` (intp), or as `len(a)` (d = 0) or `a.size` (a 1-D a)."""

    array: object
    dim: int
    spelling: str = "shape"

    def __post_init__(self):
        self.type = "int64"
        self.range = Range(self.array.shape[self.dim], self.array.shape[self.dim])

    def render(self, r):
        name = self.array.host_names()[0] if r.host else self.array.name
        return {"shape": f"{name}.shape[{self.dim}]", "len": f"len({name})", "size": f"{name}.size"}[self.spelling]

    def evaluate(self, env):
        return self.array.shape[self.dim]


@dataclasses.dataclass(eq=False)
class Load(Expr):
    """An element of a read-only input array (of one field, for a
    structured one): `x[i, j]`, `x[()]`, `x[i].f0`, `x[i]['f0']`."""

    array: object
    index: list
    field: object = None
    item_syntax: bool = False

    def __post_init__(self):
        self.type = self.array.element_type(self.field)
        self.range = self.array.value_range(self.field)
        self.sources = frozenset().union(*(c.sources for c in self.index))

    def children(self):
        return list(self.index)

    def render(self, r):
        return self.array.render_element(r, self.index, self.field, self.item_syntax)


@dataclasses.dataclass(eq=False)
class Cast(Expr):
    """`np.int16(x)`, `np.float32(x)`, ...: a conversion (a truncation
    for narrower integers)."""

    dtype: str
    operand: Expr

    def __post_init__(self):
        self.type = self.dtype
        self.sources = self.operand.sources
        self.range = converted_range(self.operand.range, self.operand.type, self.dtype)

    def children(self):
        return [self.operand]

    def render(self, r):
        text = self.operand.render(r)
        if r.host and self.dtype == "float16":
            return text if self.operand.type == "float16" else r.float16(f"np.float64({text})")
        return f"np.{self.dtype}({text})"

    def evaluate(self, env):
        value = self.operand.evaluate(env)
        if self.dtype not in INT_DTYPES or self.operand.type not in INT_DTYPES:
            raise Opaque()
        value = np.asarray(value, np.int64)
        lo, hi = int_limits(self.dtype)
        if lo <= value.min() and value.max() <= hi:
            return value
        if lo == 0:
            raise Opaque()  # a wrapped unsigned value: not one int64 holds
        return value.astype(self.dtype).astype(np.int64)  # a truncation, as NumPy truncates


def converted_range(source, from_type, to_type):
    """The range of a value of `source` converted from one type to another,
    or None where the conversion has no single meaning (a float out of an
    integer's range) or is one the generator avoids."""
    if source is None:
        return None
    to_kind, from_kind = kind_of(to_type), kind_of(from_type)
    if from_kind == "complex" and to_kind != "complex":
        return None
    if to_kind == "bool":
        # Numba's CUDA target emits IR that NVVM refuses for a float16's truth.
        return None if from_type == "float16" else Range(0, 1)
    if to_kind == "int":
        lo, hi = int_limits(to_type)
        if from_kind in ("int", "bool"):
            if lo <= source.lo and source.hi <= hi:
                return Range(int(source.lo), int(source.hi))
            return Range(lo, hi)
        # A float converts by truncation, defined only inside the range.
        if not (lo - 1 < source.lo - 1 and source.hi + 1 < hi + 1) or source.magnitude > FLOAT_LIMIT:
            return None
        return Range(int(math.trunc(source.lo)), int(math.trunc(source.hi)))
    # To a float or complex type: exact where the bits fit.
    limit = FLOAT16_LIMIT if to_type == "float16" else FLOAT_LIMIT
    if source.magnitude > limit:
        return None
    bits = source.fraction_bits if fits_mantissa(source.magnitude, source.fraction_bits, to_type) else None
    if to_kind == "complex" and from_kind != "complex":
        # A complex's range covers both parts: the imaginary part is 0.
        return Range(min(float(source.lo), 0.0), max(float(source.hi), 0.0), bits)
    return Range(float(source.lo), float(source.hi), bits)


@dataclasses.dataclass(eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr
    operand_types: tuple = None

    def __post_init__(self):
        self.sources = self.left.sources | self.right.sources

    def children(self):
        return [self.left, self.right]

    def render(self, r):
        left = _host_convert(r, self.left, self.operand_types[0])
        right = _host_convert(r, self.right, self.operand_types[1])
        text = f"({left} {self.op} {right})"
        if r.host and self.type == "float16":
            return r.float16(text)
        return text

    def evaluate(self, env):
        # Only what index and guard arithmetic is made of: int64 and
        # comparisons (NumPy's int64 operators are Python's on values this
        # small).
        if self.type not in ("int64", "bool") or "uint64" in self.operand_types:
            raise Opaque()
        left, right = self.left.evaluate(env), self.right.evaluate(env)
        if self.op in COMPARISONS:
            return OPERATORS[self.op](np.asarray(left), np.asarray(right))
        if self.op in ("and", "or"):
            return np.logical_and(left, right) if self.op == "and" else np.logical_or(left, right)
        return OPERATORS[self.op](np.asarray(left, np.int64), np.asarray(right, np.int64))


@dataclasses.dataclass(eq=False)
class Unary(Expr):
    """`-x`, `~x`, `not x`, `abs(x)`."""

    op: str
    operand: Expr

    def __post_init__(self):
        self.sources = self.operand.sources

    def children(self):
        return [self.operand]

    def render(self, r):
        text = self.operand.render(r)
        return {"neg": f"(-{text})", "~": f"(~{text})", "not": f"(not {text})", "abs": f"abs({text})"}[self.op]

    def evaluate(self, env):
        raise Opaque()


@dataclasses.dataclass(eq=False)
class Call(Expr):
    """A builtin (`min`, `max`, `complex`) or a device function called."""

    function: object  # a builtin's name, or a DeviceFunction
    arguments: list
    operand_types: tuple = None

    def __post_init__(self):
        self.sources = frozenset().union(*(a.sources for a in self.arguments))
        if isinstance(self.function, DeviceFunction):
            body = self.function.body
            self.type, self.range = body.type, body.range
            self.sources |= self.function.intrinsic_sources()

    def children(self):
        return list(self.arguments)

    def render(self, r):
        if isinstance(self.function, DeviceFunction):
            arguments = [a.render(r) for a in self.arguments]
            if r.host:
                arguments = [r.launch_arguments()] + arguments
            return f"{r.device(self.function)}({', '.join(arguments)})"
        arguments = [_host_convert(r, a, t) for a, t in zip(self.arguments, self.operand_types)]
        # njit's min and max of floats are Python's; the CUDA target's are
        # oracles.HOST_HEADER's cuda_min and cuda_max.
        function = f"cuda_{self.function}" if r.host and self.function in ("min", "max") else self.function
        text = f"{function}({', '.join(arguments)})"
        return r.float16(text) if r.host and self.type == "float16" else text

    def evaluate(self, env):
        if isinstance(self.function, DeviceFunction):
            inner = dict(env)
            for parameter, argument in zip(self.function.parameters, self.arguments):
                inner[parameter.name] = argument.evaluate(env)
            return self.function.body.evaluate(inner)
        if self.function in ("min", "max") and kind_of(self.type) == "int" and self.type != "uint64":
            values = [np.asarray(a.evaluate(env), np.int64) for a in self.arguments]
            return np.minimum(*values) if self.function == "min" else np.maximum(*values)
        raise Opaque()

    @property
    def quantity(self):
        if isinstance(self.function, DeviceFunction) and not self.arguments:
            return self.function.body.quantity
        return None

    @property
    def quantities(self):
        if isinstance(self.function, DeviceFunction) and not self.arguments:
            return self.function.body.quantities
        return None

    def part_range(self, k):
        return self.function.body.part_range(k)

    def uses(self):
        if isinstance(self.function, DeviceFunction):
            inner = self.function.body.uses()
            if not self.arguments:
                return inner  # a getter: its intrinsic, as it is
            return [(name, False) for name, _ in inner] + \
                [(name, False) for a in self.arguments for name, _ in a.uses()]
        return super().uses()


@dataclasses.dataclass(eq=False)
class Part(Expr):
    """`c.real` or `c.imag` of a complex."""

    operand: Expr
    attribute: str

    def __post_init__(self):
        self.type = "float32" if self.operand.type == "complex64" else "float64"
        self.range, self.sources = self.operand.range, self.operand.sources

    def children(self):
        return [self.operand]

    def render(self, r):
        return f"{self.operand.render(r)}.{self.attribute}"


@dataclasses.dataclass(eq=False)
class Choose(Expr):
    """`(a if test else b)`, a and b of one type."""

    test: Expr
    then: Expr
    otherwise: Expr

    def __post_init__(self):
        self.type = self.then.type
        self.range = self.then.range.union(self.otherwise.range)
        self.sources = self.test.sources | self.then.sources | self.otherwise.sources

    def children(self):
        return [self.test, self.then, self.otherwise]

    def render(self, r):
        return f"({self.then.render(r)} if {self.test.render(r)} else {self.otherwise.render(r)})"


@dataclasses.dataclass(eq=False)
class Parameter(Expr):
    """A device function's parameter, typed as its one call's argument."""

    name: str
    argument: Expr

    def __post_init__(self):
        self.type, self.range, self.sources = self.argument.type, self.argument.range, self.argument.sources

    def render(self, r):
        return self.name

    def evaluate(self, env):
        return env[self.name]

    def uses(self):
        return []


@dataclasses.dataclass(eq=False)
class DeviceFunction:
    """`@cuda.jit(device=True)`: a getter of an intrinsic (`return
    cuda.grid(1)`), a function of its parameters that may read intrinsics
    itself, or a store helper (`a[j] = v`), called once each."""

    suffix: str
    parameters: list  # Parameter
    body: Expr = None  # what it returns; None for a store helper
    store: object = None  # the Store it performs, for a store helper

    def render(self, r):
        names = [p.name for p in self.parameters]
        if self.store is not None:
            names = self.store.helper_parameters()
        if r.host:
            names = [r.launch_arguments()] + names
        lines = ["@njit" if r.host else "@cuda.jit(device=True)", f"def {r.device(self)}({', '.join(names)}):"]
        if self.store is not None:
            lines += self.store.render_in_helper(r)
        else:
            lines.append(f"    return {self.body.render(r)}")
        return lines

    def intrinsic_sources(self):
        return frozenset().union(*(e.sources for e in self.body.walk() if isinstance(e, Read))) \
            if self.body is not None else frozenset()


@dataclasses.dataclass(eq=False)
class LoopIndex(Expr):
    """The variable of a grid-stride loop: every value belongs to one
    thread, so it is a source of its own."""

    name: str
    length: int

    def __post_init__(self):
        self.type, self.range = "int64", Range(0, self.length - 1)
        self.sources = frozenset([f"loop {self.name}"])

    def render(self, r):
        return self.name

    def evaluate(self, env):
        value = env.get(self.name)
        if value is None:
            raise Opaque()
        return value
