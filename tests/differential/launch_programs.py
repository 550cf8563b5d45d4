"""Random kernels over the CUDA programming model's launch indices.

The first generator (programs.py) draws rich control flow over one fixed
set of 1-D arrays, always indexed by `t = cuda.grid(1)` and always storing
int64 or float64: it never stored a launch index into a 32-bit array, and
a CPU-engine fast path that dropped exactly `a[i] = i` (i =
cuda.threadIdx.x, int32 array) went unseen through 10,000 of its programs.
This generator covers the programming model instead: every launch-index
intrinsic and form

    cuda.threadIdx / blockIdx / blockDim / gridDim .x .y .z, cuda.grid(1/2/3),
    cuda.gridsize(1/2/3), cuda.laneid, cuda.warpsize, and global indices
    written by hand in three operand orders ("global x (block first)" is
    `cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`, "thread first"
    `cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x`, "dim first"
    `cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x`; also y and z)

read inline, through local variables, tuples (built, indexed, unpacked
from cuda.grid(2)) and device functions (some of which read intrinsics
themselves), in three forms: as an index (`a[i]`, `a[x, y]`, `a[t]` with t
a tuple), as the stored value (`a[j] = cuda.threadIdx.x`), and inside
arithmetic (`(i * 3 + 7) // 2`, `i ^ 5`, `min(i, k)`, `np.int16(i)`,
comparisons, `complex(i, 1)`, float arithmetic). Targets are arrays of
every dtype (int8 ... uint64, float16/32/64, complex64/128, bool) in every
layout: C, F, A over whole-array permutations (reversed axes, transposes),
A over sub-sampled views ("strided view": `base[::2]`, `base[1::3, ::-1]`),
0-d arrays and fields of structured arrays ("record"). Stores are guarded
or not (`if i < a.shape[0]:`, `len(a)`, `a.size`, `if i < n:`, an early
`return`, a condition on data), inline or through a device function, some
in grid-stride loops, some with an index counted from the end (`i -
a.shape[0]`) or narrowed (`np.uint8(i)`), over launches of 1 to 3
dimensions whose sizes are no multiples of a warp.

A coverage cell is (intrinsic, dtype, layout, form): an intrinsic used in
that form in the index or the value of a store into (or a load from) an
array of that dtype and layout. Each program is built around FOCUS_CELLS
cells taken in turn from a fixed shuffle of every possible cell
(coverage_cells()), so that any CELL_ROTATION consecutive seeds cover every
cell; the rest of the program is drawn freely.

Every program has one meaning, by construction:

  * race-free: a store's index is injective over the threads that run it
    ("owned": a global linear index, cuda.grid(k) into a k-d array, ...),
    or the stored value depends only on the index's own launch indices and
    on what every thread shares (blockDim, gridDim, warpsize, constants,
    scalar parameters, read-only inputs), so that any two threads that
    write one element write the same value ("determined"). Each array (each
    field of a structured array) has one store statement. The generator
    evaluates every index and guard over every thread of the launch with
    NumPy (StoreTracer) to check this, and check_program() repeats it on a
    finished program;
  * in bounds: arrays are sized from the range each index takes over the
    launch, and dimensions cut shorter are guarded;
  * defined arithmetic: every expression carries the interval of its
    values, so that no signed operation overflows (LLVM marks them nsw), no
    float converts to an integer out of range, no divisor is zero; shift
    counts are masked. Float products are exact (their operands' bits fit
    the mantissa), so contracting a product and a sum into an FMA changes
    nothing, and float results are IEEE-exact on every target.

The program renders twice: as the CUDA kernel, and as `@numba.njit`
functions that give Numba's compiled semantics (the harness's oracle). The
host kernel is a function of the twelve launch indices, passed as np.int32
(so that Numba types them as the GPU does); cuda.grid and cuda.gridsize
are computed from them in int64, laneid is the linear thread index in the
block modulo 32. Numba's CPU target has no float16: the host rendering
carries a float16 value as the float64 that holds it exactly, rounds each
float16 result with an exact round-to-nearest-even (`<name>_f16`), and
passes float16 arrays (and fields) as float64 shadows that run_host
converts back, a conversion that is exact because every value stored was
rounded once, as the GPU rounds it. Structured arrays reach the host
kernel as one view per field.

Some programs are plain (PLAIN_SHARE of those whose focus allows it):
values of int64, float64, bool and complex128 only, contiguous arrays, no
structured ones, most of them one block, so that Numba's CUDA simulator,
which computes with Python and NumPy scalars, computes what compiled Numba
does; simulator_judges says which programs it may judge.

Types come from Numba's own typing context (its CPU target, which types
every operation used here as the CUDA target does, and for float16, whose
rules the CPU target lacks, a table of the CUDA target's; both are checked
against the CUDA target in the unit tests). The CUDA target is not
imported here, so that this module also loads under Numba's simulator.
"""

import collections
import dataclasses
import functools
import itertools
import math
import operator
import random

import numpy as np
from numba.core import types as numba_types
from numba.core.registry import cpu_target

# --- The vocabulary of coverage ----------------------------------------------

AXES = ("x", "y", "z")
DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "bool")
LAYOUTS = ("C", "F", "A", "0-d", "strided view", "record")
FORMS = ("index", "value", "arithmetic")
INT_DTYPES = DTYPES[:8]
FLOAT_DTYPES = ("float16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")

# The launch-index quantities every intrinsic is made of, as PTX names them;
# the host kernel takes the first twelve as parameters, in this order.
LAUNCH_PARAMETERS = tuple(f"{register}_{axis}" for register in ("tid", "ctaid", "ntid", "nctaid")
                          for axis in AXES)
# Quantities every thread of a launch shares: a value made only of these
# (and of constants and inputs) is the same in every thread.
UNIFORM_QUANTITIES = frozenset([f"ntid_{a}" for a in AXES] + [f"nctaid_{a}" for a in AXES]
                               + [f"gridsize_{a}" for a in AXES] + ["warpsize"])


@dataclasses.dataclass(frozen=True)
class Intrinsic:
    """One launch-index intrinsic or form. `quantities` names what each
    component is (a tuple intrinsic has several); `source` and `host` are
    its text in the kernel and in the host rendering."""

    name: str
    source: str
    host: str
    type: object  # "int32", "int64", or a tuple of component types
    quantities: tuple

    @property
    def arity(self):
        return len(self.type) if isinstance(self.type, tuple) else 0


def _global(axis, order):
    """A hand-written global index of `axis`, in one of three operand orders."""
    b, d, t = f"cuda.blockIdx.{axis}", f"cuda.blockDim.{axis}", f"cuda.threadIdx.{axis}"
    hb, hd, ht = f"ctaid_{axis}", f"ntid_{axis}", f"tid_{axis}"
    text = {"block first": (f"({b} * {d} + {t})", f"({hb} * {hd} + {ht})"),
            "thread first": (f"({t} + {d} * {b})", f"({ht} + {hd} * {hb})"),
            "dim first": (f"({d} * {b} + {t})", f"({hd} * {hb} + {ht})")}[order]
    return Intrinsic(f"global {axis} ({order})", *text, "int64", (f"global_{axis}",))


def _intrinsics():
    found = []
    for register, attribute in (("tid", "threadIdx"), ("ctaid", "blockIdx"), ("ntid", "blockDim"),
                                ("nctaid", "gridDim")):
        for axis in AXES:
            found.append(Intrinsic(f"{attribute}.{axis}", f"cuda.{attribute}.{axis}", f"{register}_{axis}",
                                   "int32", (f"{register}_{axis}",)))
    for n in (1, 2, 3):
        globals_ = [f"(ctaid_{a} * ntid_{a} + tid_{a})" for a in AXES[:n]]
        sizes = [f"(ntid_{a} * nctaid_{a})" for a in AXES[:n]]
        scalar = n == 1
        found.append(Intrinsic(f"grid({n})", f"cuda.grid({n})",
                               globals_[0] if scalar else "(" + ", ".join(globals_) + ")",
                               "int64" if scalar else ("int64",) * n,
                               tuple(f"global_{a}" for a in AXES[:n])))
        found.append(Intrinsic(f"gridsize({n})", f"cuda.gridsize({n})",
                               sizes[0] if scalar else "(" + ", ".join(sizes) + ")",
                               "int64" if scalar else ("int64",) * n,
                               tuple(f"gridsize_{a}" for a in AXES[:n])))
    found.append(Intrinsic("laneid", "cuda.laneid", "np.int32((tid_x + ntid_x * (tid_y + ntid_y * tid_z)) % 32)",
                           "int32", ("lane",)))
    found.append(Intrinsic("warpsize", "cuda.warpsize", "np.int32(32)", "int32", ("warpsize",)))
    for axis in AXES:
        for order in ("block first", "thread first", "dim first"):
            found.append(_global(axis, order))
    return {intrinsic.name: intrinsic for intrinsic in found}


INTRINSICS = _intrinsics()
# Every scalar launch index: (intrinsic, its component or None, quantity).
SCALAR_ATOMS = [(name, k if intrinsic.arity else None, quantity)
                for name, intrinsic in INTRINSICS.items() for k, quantity in enumerate(intrinsic.quantities)]


def coverage_cells():
    """Every possible cell (intrinsic, dtype, layout, form): a 0-d array
    takes no index, so it has no index cells."""
    return {(intrinsic, dtype, layout, form)
            for intrinsic in INTRINSICS for dtype in DTYPES for layout in LAYOUTS for form in FORMS
            if not (layout == "0-d" and form == "index")}


# Each program is built around FOCUS_CELLS cells, taken in turn from one
# fixed shuffle of every cell: any CELL_ROTATION consecutive seeds cover all.
FOCUS_CELLS = 4
_ROTATION = sorted(coverage_cells())
random.Random("launch programs: the rotation of cells").shuffle(_ROTATION)
CELL_ROTATION = -(-len(_ROTATION) // FOCUS_CELLS)


def focus_cells(seed):
    return [_ROTATION[(seed * FOCUS_CELLS + k) % len(_ROTATION)] for k in range(FOCUS_CELLS)]


def coverage_report(counter):
    """A plain-text table of the cells a campaign hit (`counter`, a Counter
    of cells): the total, the forms hit per intrinsic, the count per dtype
    and per layout, and the cells never hit."""
    possible = coverage_cells()
    hit = {cell for cell, count in counter.items() if count and cell in possible}
    lines = [f"cells hit: {len(hit)} / {len(possible)} ({100.0 * len(hit) / len(possible):.1f}%)", "",
             f"{'intrinsic':<26}" + "".join(f"{form:>12}" for form in FORMS)]
    for intrinsic in INTRINSICS:
        row = []
        for form in FORMS:
            cells = {c for c in possible if c[0] == intrinsic and c[3] == form}
            row.append(f"{len(cells & hit)}/{len(cells)}")
        lines.append(f"{intrinsic:<26}" + "".join(f"{r:>12}" for r in row))
    for position, title in ((1, "dtype"), (2, "layout")):
        lines += ["", f"{title:<14}{'cells hit':>12}{'uses':>10}"]
        for value in (DTYPES if position == 1 else LAYOUTS):
            cells = {c for c in possible if c[position] == value}
            uses = sum(count for cell, count in counter.items() if cell[position] == value)
            lines.append(f"{value:<14}{f'{len(cells & hit)}/{len(cells)}':>12}{uses:>10}")
    missed = sorted(possible - hit)
    lines.append("")
    if not missed:
        lines.append("cells never hit: none")
    elif len(missed) <= 40:
        lines.append(f"cells never hit ({len(missed)}):")
        lines += [f"  {cell}" for cell in missed]
    else:
        lines.append(f"cells never hit: {len(missed)} (first 40 below)")
        lines += [f"  {cell}" for cell in missed[:40]]
    return "\n".join(lines)


# --- Numba's types -----------------------------------------------------------
# Types are Numba's names ("int32", "float16", "complex128", "bool") or, for
# tuples, Python tuples of them.

_TYPING = cpu_target.typing_context
_TYPING.refresh()
_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
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
    function = _OPERATORS.get(op) or _TYPING.resolve_value_type(_BUILTINS[op])
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


def _fits_mantissa(magnitude, fraction_bits, type_name):
    """Whether every multiple of 2**-fraction_bits up to `magnitude` is
    exact in the float type."""
    if fraction_bits is None or magnitude >= FLOAT_LIMIT:
        return False
    return magnitude * 2.0 ** fraction_bits < 2.0 ** MANTISSA_BITS[type_name]


# --- Expressions -------------------------------------------------------------


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
        self.range = _converted_range(self.operand.range, self.operand.type, self.dtype)

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


def _converted_range(source, from_type, to_type):
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
    bits = source.fraction_bits if _fits_mantissa(source.magnitude, source.fraction_bits, to_type) else None
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
            return _OPERATORS[self.op](np.asarray(left), np.asarray(right))
        if self.op in ("and", "or"):
            return np.logical_and(left, right) if self.op == "and" else np.logical_or(left, right)
        return _OPERATORS[self.op](np.asarray(left, np.int64), np.asarray(right, np.int64))


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
        text = f"{self.function}({', '.join(arguments)})"
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


# --- Statements --------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class Let:
    var: Var

    def render(self, r, indent):
        return [f"{indent}{self.var.name} = {self.var.bound.render(r)}"]

    def expressions(self):
        return [self.var.bound]


@dataclasses.dataclass(eq=False)
class Unpack:
    """`x, y = cuda.grid(2)`: each Var is bound to an Item of the tuple."""

    vars: list
    tuple_expr: Expr

    def render(self, r, indent):
        return [f"{indent}{', '.join(v.name for v in self.vars)} = {self.tuple_expr.render(r)}"]

    def expressions(self):
        return [self.tuple_expr]


@dataclasses.dataclass(eq=False)
class EarlyReturn:
    test: Expr

    def render(self, r, indent):
        return [f"{indent}if {self.test.render(r)}:", f"{indent}    return"]

    def expressions(self):
        return [self.test]


@dataclasses.dataclass(eq=False)
class Guarded:
    test: Expr
    body: list

    def render(self, r, indent):
        return [f"{indent}if {self.test.render(r)}:"] + \
            [line for statement in self.body for line in statement.render(r, indent + "    ")]

    def expressions(self):
        return [self.test]


@dataclasses.dataclass(eq=False)
class ForRange:
    """`for g in range(start, stop, step):` over the body. A grid-stride
    loop starts at the thread's global index and steps by the grid's
    threads, so that every g belongs to one thread; a row loop, `for g in
    range(m):`, fills a row of the thread's own."""

    var: Expr
    start: Expr
    stop: Expr
    step: Expr
    body: list

    def render(self, r, indent):
        if isinstance(self.start, Const) and self.start.value == 0 and \
                isinstance(self.step, Const) and self.step.value == 1:
            bounds = self.stop.render(r)
        else:
            bounds = f"{self.start.render(r)}, {self.stop.render(r)}, {self.step.render(r)}"
        return [f"{indent}for {self.var.name} in range({bounds}):"] + \
            [line for statement in self.body for line in statement.render(r, indent + "    ")]

    def expressions(self):
        return [self.start, self.stop, self.step]


@dataclasses.dataclass(eq=False)
class Store:
    """`target[index] = value` (`target[index].field = value` for a field
    of a structured array), inline or through a store-helper device
    function. `owned`: the index is injective over the threads that run
    the store; otherwise the value depends only on the index's launch
    quantities and on what every thread shares."""

    array: object
    index: list  # scalar component Exprs, or one tuple Expr, or [] for a 0-d array
    value: Expr
    owned: bool
    field: object = None
    item_syntax: bool = False
    helper: object = None  # a DeviceFunction

    def index_components(self):
        """The index as scalar components (the items of a tuple index)."""
        if len(self.index) == 1 and isinstance(self.index[0].type, tuple):
            whole = self.index[0]
            return [Item(whole, k) for k in range(len(whole.type))]
        return list(self.index)

    def index_quantities(self):
        return {c.quantity for c in self.index_components() if c.quantity is not None}

    def render(self, r, indent):
        if self.helper is not None:
            arguments = [self.array.render_argument(r, self.field)]
            if self.index:
                arguments.append(self.render_index(r))
            arguments.append(self.value.render(r))
            if r.host:
                arguments = [r.launch_arguments()] + arguments
            return [f"{indent}{r.device(self.helper)}({', '.join(arguments)})"]
        return [f"{indent}{self.array.render_element(r, self.index, self.field, self.item_syntax)} = "
                f"{self.value.render(r)}"]

    def render_index(self, r):
        if len(self.index) == 1:
            return self.index[0].render(r)
        return "(" + ", ".join(c.render(r) for c in self.index) + ")"

    def helper_parameters(self):
        return ["a", "j", "v"] if self.index else ["a", "v"]

    def render_in_helper(self, r):
        index = [Parameter("j", self.index[0] if len(self.index) == 1 else TupleOf(self.index))] \
            if self.index else []
        element = self.array.render_element(r, index, self.field, self.item_syntax, name="a")
        return [f"    {element} = v"]

    def expressions(self):
        return list(self.index) + [self.value]


def statement_children(statement):
    return statement.body if isinstance(statement, (Guarded, ForRange)) else []


def walk_statements(statements):
    for statement in statements:
        yield statement
        yield from walk_statements(statement_children(statement))


# --- Arrays ------------------------------------------------------------------

SIGNATURE_DTYPES = {dtype: ("boolean" if dtype == "bool" else dtype) for dtype in DTYPES}
NUMPY_DTYPES = {dtype: np.dtype(np.bool_ if dtype == "bool" else dtype) for dtype in DTYPES}
SENTINEL_BYTE = 0x5A
FIELD_NAMES = ("f0", "f1", "f2")


@dataclasses.dataclass
class View:
    """How an argument is cut from its base: `base[slices]`, then
    transposed by `axes`; `order` is the base's memory order."""

    base_shape: tuple
    order: str = "C"
    slices: tuple = None
    axes: tuple = None

    def apply(self, base):
        view = base if self.slices is None else base[self.slices]
        return view if self.axes is None else view.transpose(self.axes)

    def contiguous(self):
        """Whether the argument is C- or F-contiguous (Numba's CUDA target,
        and its simulator, copy only those to the device)."""
        view = self.apply(np.empty(self.base_shape, np.uint8, order=self.order))
        return view.flags.c_contiguous or view.flags.f_contiguous


@dataclasses.dataclass(eq=False)
class ArrayParam:
    """An array parameter: an output (written) or a read-only input, of
    `dtype`, or a structured array of `fields` [(name, dtype)]. `shape` is
    what the kernel sees; `signature_layout` its layout in the signature
    ("C", "F", "A"); `layout` its coverage layout."""

    name: str
    dtype: object
    layout: str
    shape: tuple
    view: View
    signature_layout: str
    output: bool
    fields: list = None
    values: dict = None  # input data: per field (None for a plain array), the base's elements in C order

    @property
    def ndim(self):
        return len(self.shape)

    def numpy_dtype(self):
        if self.fields is None:
            return NUMPY_DTYPES[self.dtype]
        return np.dtype([(name, NUMPY_DTYPES[dtype]) for name, dtype in self.fields], align=True)

    def element_type(self, field=None):
        return dict(self.fields)[field] if field is not None else self.dtype

    def value_range(self, field=None):
        """The range of an input's elements."""
        dtype = self.element_type(field)
        values = self.values[field]
        if dtype in COMPLEX_DTYPES:
            parts = [v for c in values for v in (c.real, c.imag)]
            return Range(min(parts), max(parts), 3)
        bits = 3 if dtype in FLOAT_DTYPES else 0
        return Range(min(values), max(values), bits) if dtype != "bool" else Range(0, 1)

    def signature(self):
        if self.fields is not None:
            dtype = self.numpy_dtype()
            fields = ", ".join(f"('{name}', {{'type': {SIGNATURE_DTYPES[t]}, 'offset': {dtype.fields[name][1]}}})"
                               for name, t in self.fields)
            element = f"Record([{fields}], {dtype.itemsize}, True)"
        else:
            element = SIGNATURE_DTYPES[self.dtype]
        if self.ndim == 0:
            return f"Array({element}, 0, '{self.signature_layout}')"
        dims = [":"] * self.ndim
        if self.signature_layout == "C":
            dims[-1] = "::1"
        elif self.signature_layout == "F":
            dims[0] = "::1"
        return f"{element}[{', '.join(dims)}]"

    def host_names(self):
        """The host kernel's parameters for this array: one per field of a
        structured array."""
        if self.fields is None:
            return [self.name]
        return [f"{self.name}_{name}" for name, _ in self.fields]

    def render_argument(self, r, field):
        return f"{self.name}_{field}" if r.host and field is not None else self.name

    def render_element(self, r, index, field, item_syntax, name=None):
        """An element as the kernel (or, with `name`, a store helper, whose
        parameter holds the array, or on the host that field's view)
        spells it."""
        if len(index) == 0:
            subscript = "()"
        elif len(index) == 1:
            subscript = index[0].render(r)
        else:
            subscript = ", ".join(c.render(r) for c in index)
        if field is None:
            return f"{name or self.name}[{subscript}]"
        if r.host:
            return f"{name or self.render_argument(r, field)}[{subscript}]"
        name = name or self.name
        return f"{name}[{subscript}]['{field}']" if item_syntax else f"{name}[{subscript}].{field}"

    def build(self):
        """A fresh (argument, base): the base filled with the sentinel (an
        output) or with the input's values, and the view of it the kernel
        gets."""
        dtype = self.numpy_dtype()
        size = int(np.prod(self.view.base_shape))
        flat = np.full(size * dtype.itemsize, SENTINEL_BYTE, np.uint8).view(dtype)
        base = flat.reshape(self.view.base_shape, order=self.view.order)
        if not self.output:
            for field, values in self.values.items():
                target = base if field is None else base[field]
                target[...] = np.array(values, NUMPY_DTYPES[self.element_type(field)]).reshape(self.view.base_shape)
        return self.view.apply(base), base

    def host_arguments(self, argument):
        """The host kernel's arguments for this array, and what to do once
        it has run: float16 travels as a float64 shadow, converted back
        (exactly: every value stored in it was rounded once)."""
        parts = [argument] if self.fields is None else [argument[name] for name, _ in self.fields]
        host, write_backs = [], []
        for part in parts:
            if part.dtype == np.float16:
                shadow = part.astype(np.float64)
                host.append(shadow)
                if self.output:
                    write_backs.append((part, shadow))
            else:
                host.append(part)
        return host, write_backs


def run_write_backs(write_backs):
    for part, shadow in write_backs:
        part[...] = shadow.astype(np.float16)


# --- Launches ----------------------------------------------------------------

BLOCK_SHAPES = {1: [(7,), (33,), (45,), (64,), (1,), (100,), (32,), (96,), (128,), (250,)],
                2: [(5, 3), (8, 4), (3, 11), (16, 2), (1, 7), (33, 2), (2, 17), (32, 3)],
                3: [(4, 3, 2), (2, 2, 2), (3, 1, 5), (7, 2, 3), (2, 3, 4), (1, 5, 3), (9, 2, 2)]}
GRID_SHAPES = {1: [(1,), (3,), (5,), (2,), (4,), (6,)],
               2: [(2, 3), (1, 2), (3, 1), (2, 2), (1, 1), (3, 2)],
               3: [(2, 1, 2), (1, 2, 2), (2, 2, 2), (1, 1, 3), (1, 1, 1), (3, 1, 2)]}
MAX_THREADS = 1500


@dataclasses.dataclass(frozen=True)
class Launch:
    grid: tuple  # as launched: 1 to 3 dimensions
    block: tuple
    as_ints: bool  # a 1-D launch given as two ints

    def padded(self, shape):
        return tuple(shape) + (1,) * (3 - len(shape))

    @property
    def blocks(self):
        return int(np.prod(self.grid))

    @property
    def threads(self):
        return int(np.prod(self.block))

    def configuration(self):
        if self.as_ints:
            return self.grid[0], self.block[0]
        return tuple(self.grid), tuple(self.block)

    def points(self):
        """Every thread's (tid, ctaid) triples, in the order run_host runs
        them: block after block, x fastest in each."""
        gx, gy, gz = self.padded(self.grid)
        bx, by, bz = self.padded(self.block)
        for cz, cy, cx in itertools.product(range(gz), range(gy), range(gx)):
            for tz, ty, tx in itertools.product(range(bz), range(by), range(bx)):
                yield (tx, ty, tz), (cx, cy, cz)

    @functools.cached_property
    def environment(self):
        """Every launch quantity over every thread, as NumPy int64 arrays
        (the uniform ones as ints)."""
        points = list(self.points())
        tid = np.array([p[0] for p in points], np.int64).reshape(-1, 3)
        ctaid = np.array([p[1] for p in points], np.int64).reshape(-1, 3)
        ntid, nctaid = self.padded(self.block), self.padded(self.grid)
        env = {}
        for k, axis in enumerate(AXES):
            env[f"tid_{axis}"] = tid[:, k]
            env[f"ctaid_{axis}"] = ctaid[:, k]
            env[f"ntid_{axis}"] = ntid[k]
            env[f"nctaid_{axis}"] = nctaid[k]
            env[f"global_{axis}"] = ctaid[:, k] * ntid[k] + tid[:, k]
            env[f"gridsize_{axis}"] = ntid[k] * nctaid[k]
        env["lane"] = (tid[:, 0] + ntid[0] * (tid[:, 1] + ntid[1] * tid[:, 2])) % 32
        env["warpsize"] = 32
        env["thread"] = np.arange(len(points))
        return env

    def range_of(self, quantity):
        values = np.asarray(self.environment[quantity])
        return Range(int(values.min()), int(values.max()))


def _wrapped(index, size):
    """Indices as Numba takes them: a negative one counts from the end."""
    return np.where((index < 0) & (index >= -size), index + size, index)


def _broadcast(value, count):
    return np.broadcast_to(np.asarray(value, np.int64), (count,))


class StoreTracer:
    """Runs a kernel's statements over every thread of the launch at once,
    as far as they have values at generation time (launch indices, scalar
    parameters, shapes and the integer arithmetic over them): which
    threads are still running, which run each store and at which index,
    and each load's indices. Conditions that depend on data are taken as
    true (the threads they leave out are a subset)."""

    def __init__(self, launch):
        self.launch = launch
        self.count = len(launch.environment["thread"])
        self.env = dict(launch.environment)
        self.alive = np.ones(self.count, bool)
        self.stores = collections.defaultdict(list)  # Store -> [(mask, [index arrays])], a pair per trip
        self.loads = []  # (Load, mask, [index arrays])

    def value(self, expr):
        try:
            value = expr.evaluate(self.env)
        except Opaque:
            return None
        if isinstance(value, tuple):
            return tuple(_broadcast(v, self.count) for v in value)
        return _broadcast(value, self.count)

    def run(self, statements, mask=None):
        mask = self.alive if mask is None else mask
        for statement in statements:
            for expr in statement.expressions():
                self._loads_in(expr, mask & self.alive)
            if isinstance(statement, Let):
                self.env[statement.var.name] = self.value(statement.var.bound)
            elif isinstance(statement, Unpack):
                values = self.value(statement.tuple_expr)
                for k, var in enumerate(statement.vars):
                    self.env[var.name] = None if values is None else values[k]
            elif isinstance(statement, EarlyReturn):
                test = self.value(statement.test)
                if test is None:
                    raise ValueError("an early return must depend on launch indices alone")
                self.alive = self.alive & ~test.astype(bool)
            elif isinstance(statement, Guarded):
                self.run(statement.body, mask & self.alive & self.condition(statement.test))
            elif isinstance(statement, ForRange):
                self._loop(statement, mask & self.alive)
            elif isinstance(statement, Store):
                components = [self.value(c) for c in statement.index_components()]
                if any(c is None for c in components):
                    raise ValueError("a store's index must depend on launch indices alone")
                self.stores[statement].append((mask & self.alive, components))

    def condition(self, test):
        """The threads for which `test` may hold: all of them, where it
        depends on data (of `a and b`, where one operand does)."""
        if isinstance(test, Binary) and test.op in ("and", "or"):
            left, right = self.condition(test.left), self.condition(test.right)
            return left & right if test.op == "and" else left | right
        value = self.value(test)
        return np.ones(self.count, bool) if value is None else value.astype(bool)

    def _loop(self, loop, mask):
        start, stop, step = (self.value(e) for e in (loop.start, loop.stop, loop.step))
        if start is None or stop is None or step is None or (step <= 0).any():
            raise ValueError("a loop around stores must run over launch indices alone")
        trip = 0
        while True:
            k = start + trip * step
            running = mask & (k < stop)
            if not running.any():
                break
            self.env[loop.var.name] = k
            self.run(loop.body, running)
            trip += 1
        self.env[loop.var.name] = None

    def _loads_in(self, expr, mask):
        for node in expr.walk():
            if isinstance(node, Load) and node.index:
                components = [self.value(c) for c in node.index]
                self.loads.append((node, mask, components))

    def problems(self):
        """What makes the traced kernel have more than one meaning, or go
        out of bounds: a list of sentences, empty when none."""
        found = []
        for store, chunks in self.stores.items():
            shape = store.array.shape
            keys = []
            for mask, components in chunks:
                if not mask.any():
                    continue
                linear = np.zeros(int(mask.sum()), np.int64)
                for dim, values in enumerate(components):
                    chosen = _wrapped(values[mask], shape[dim])
                    if chosen.min() < 0 or chosen.max() >= shape[dim]:
                        found.append(f"store into {store.array.name}: index {dim} out of bounds")
                    linear = linear * shape[dim] + chosen
                keys.append(linear)
            if store.owned and keys:
                joined = np.concatenate(keys)
                if len(np.unique(joined)) != len(joined):
                    found.append(f"store into {store.array.name}: two threads store into one element")
            if not store.owned:
                quantities = store.index_quantities()
                if not store.value.sources <= quantities:
                    found.append(f"store into {store.array.name}: its value depends on "
                                 f"{sorted(store.value.sources - quantities)}, which its index does not")
        for load, mask, components in self.loads:
            if not mask.any():
                continue
            for dim, values in enumerate(components):
                if values is None:
                    found.append(f"load from {load.array.name}: index {dim} depends on data")
                    continue
                chosen = values[mask]
                if chosen.min() < 0 or chosen.max() >= load.array.shape[dim]:
                    found.append(f"load from {load.array.name}: index {dim} out of bounds")
        return found

    def runs(self, store):
        """How many times threads run `store`."""
        return sum(int(mask.sum()) for mask, _ in self.stores.get(store, []))


# --- Building expressions ----------------------------------------------------
# Each builder returns the node, typed as Numba types it and with the range
# of its values, or None where Numba rejects it or its meaning would not be
# single (an overflow, a zero divisor, an inexact product, ...).


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
        if not power and not _fits_mantissa(found.magnitude, bits, result):
            return None
        if result in COMPLEX_DTYPES and not _fits_mantissa(2 * found.magnitude, bits, result):
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
    if not _fits_mantissa(found.magnitude, bits, result):
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
    a = _converted_range(left.range, left.type, left_type)
    b = _converted_range(right.range, right.type, right_type)
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
    source = _converted_range(operand.range, operand.type, converted)
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
    sources = [_converted_range(a.range, a.type, t) for a, t in zip(arguments, converted)]
    if name == "complex":
        sources = [_converted_range(a.range, a.type, "float64") for a in arguments]
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


# --- Generating programs -----------------------------------------------------

MAX_INPUTS = 3
MAX_ELEMENTS = 4096  # in an output's view; its base may be a few times larger
INPUT_ELEMENTS = 512
VALUE_KINDS = {"int": ["int", "int", "int", "bool", "float"], "float": ["int", "float", "float", "bool"],
               "complex": ["complex", "complex", "int", "float"], "bool": ["bool", "int", "float"]}
DTYPES_OF_KIND = {"int": INT_DTYPES, "float": FLOAT_DTYPES, "complex": COMPLEX_DTYPES, "bool": ("bool",)}
# Where a focus cell names an intrinsic of the y or z axis, most programs
# launch that many dimensions, so that the intrinsic takes more than one
# value.
HONOUR_AXES_SHARE = 0.7
GRID_STRIDE_SHARE = 0.12
ROW_LOOP_SHARE = 0.25
HELPER_SHARE = 0.15
EARLY_RETURN_SHARE = 0.2
EXTRA_PLANS = (0, 3)
# Some programs are plain, so that Numba's simulator can judge them too:
# values of int64, float64, bool and complex128 only (and launch indices),
# contiguous arrays, no structured ones; most of them one block. A program
# is plain where its focus cells allow (no record, no strided view).
PLAIN_SHARE = 0.6
PLAIN_DTYPES = {"int": "int64", "float": "float64", "complex": "complex128", "bool": "bool"}


def _stored_exactly(value, dtype):
    """Whether an integer array holds `value` as it is (no truncation)."""
    if dtype not in INT_DTYPES or kind_of(value.type) not in ("int", "bool"):
        return True
    lo, hi = int_limits(dtype)
    return lo <= value.range.lo and value.range.hi <= hi


def _element_kind(dtype):
    return "int" if dtype in INT_DTYPES else kind_of(dtype)


class Generator:
    """Builds one program from a seed; the same seed gives the same program
    on every machine."""

    def __init__(self, seed):
        self.seed = seed
        self.random = random.Random(seed)
        self.focus = focus_cells(seed)
        self.plain = random.Random(f"plain {seed}").random() < PLAIN_SHARE and \
            not any(layout in ("record", "strided view") for _, _, layout, _ in self.focus)
        self.launch = self.choose_launch()
        self.tracer = StoreTracer(self.launch)
        self.statements = []
        self.arrays = []
        self.scalars = []
        self.devices = []
        self.names = itertools.count()
        self.bound = {}  # (intrinsic, component) -> [Var], bound at the top level
        self.device_parameters = None  # while a device function's body is built
        self.loop_indices = []  # the loop index of the grid-stride loop being built

    # The launch.

    def choose_launch(self):
        r = self.random
        block_needs, grid_needs, either_needs = 1, 1, 1
        # The axes of one focus cell (of all four, nearly every launch would
        # have three dimensions).
        intrinsic = r.choice(self.focus)[0]
        if r.random() < HONOUR_AXES_SHARE:
            for quantity in INTRINSICS[intrinsic].quantities:
                dims = AXES.index(quantity[-1]) + 1 if quantity[-1] in AXES else 1
                if quantity.startswith(("tid", "ntid")):
                    block_needs = max(block_needs, dims)
                elif quantity.startswith(("ctaid", "nctaid")):
                    grid_needs = max(grid_needs, dims)
                else:
                    either_needs = max(either_needs, dims)
        block_dims, grid_dims = r.choice([1, 1, 1, 2, 3]), r.choice([1, 1, 1, 2, 3])
        block_dims, grid_dims = max(block_dims, block_needs), max(grid_dims, grid_needs)
        if max(block_dims, grid_dims) < either_needs:
            if r.random() < 0.5:
                block_dims = either_needs
            else:
                grid_dims = either_needs
        while True:
            block, grid = r.choice(BLOCK_SHAPES[block_dims]), r.choice(GRID_SHAPES[grid_dims])
            if self.plain and r.random() < 0.5:
                grid = (1,) * grid_dims  # the simulator runs a block's threads as Python threads
            if np.prod(block) * np.prod(grid) <= MAX_THREADS:
                break
        return Launch(grid, block, as_ints=block_dims == grid_dims == 1 and r.random() < 0.5)

    # Emitting statements.

    def emit(self, statement):
        self.statements.append(statement)
        self.tracer.run([statement])

    def fresh(self, prefix="v"):
        return f"{prefix}{next(self.names)}"

    def new_device(self, parameters, body=None):
        function = DeviceFunction(f"d{len(self.devices)}", parameters, body)
        self.devices.append(function)
        return function

    # Launch indices.

    def atom(self, name, component=None):
        """An expression that is exactly intrinsic `name` (or its component
        `component`, of a tuple intrinsic): read inline, through a local
        variable (a tuple's, or one of those unpacked from it), or from a
        device function that reads it."""
        r = self.random
        intrinsic = INTRINSICS[name]
        pick = r.choices(["inline", "bound", "getter", "tuple var"], [4, 3, 0.7, 1])[0]
        if self.device_parameters is not None:
            pick = "inline"
        if pick == "bound":
            choices = self.bound.get((name, component)) or [self.bind(intrinsic, component)]
            return r.choice(choices)
        if pick == "getter":
            call = Call(self.new_device([], Read(intrinsic, self.launch)), [])
            return Item(call, component) if component is not None else call
        if pick == "tuple var" and component is not None:
            return Item(self.bind(intrinsic, None), component)
        read = Read(intrinsic, self.launch)
        return Item(read, component) if component is not None else read

    def bind(self, intrinsic, component):
        """Binds an intrinsic to a variable at the top level: `v = ...`, or
        for a component of a tuple `vx, vy = cuda.grid(2)`."""
        read = Read(intrinsic, self.launch)
        if component is None:
            var = Var(self.fresh(), read)
            self.emit(Let(var))
            self.bound.setdefault((intrinsic.name, None), []).append(var)
            return var
        names = [self.fresh() for _ in range(intrinsic.arity)]
        variables = [Var(n, Item(read, k)) for k, n in enumerate(names)]
        self.emit(Unpack(variables, read))
        for k, var in enumerate(variables):
            self.bound.setdefault((intrinsic.name, k), []).append(var)
        return variables[component]

    def scalar_atom(self, name):
        """The intrinsic, or a random component of a tuple one."""
        intrinsic = INTRINSICS[name]
        return self.atom(name, self.random.randrange(intrinsic.arity) if intrinsic.arity else None)

    def random_atom(self, allowed=None):
        """A scalar launch index that is allowed (None: any)."""
        choices = [(name, component) for name, component, quantity in SCALAR_ATOMS
                   if allowed is None or quantity in UNIFORM_QUANTITIES or quantity in allowed]
        return self.atom(*self.random.choice(choices))

    def linear_index(self):
        """Each thread's index in the whole grid (injective): the global
        index of x in a launch with one thread per x, else `gx + sx * (gy +
        sy * gz)` of launch indices in any of their forms."""
        r = self.random
        env = self.launch.environment
        one_row = env["gridsize_y"] == 1 and env["gridsize_z"] == 1
        globals_ = {axis: [n for n, i in INTRINSICS.items() if i.quantities == (f"global_{axis}",)] for axis in AXES}
        sizes = {axis: [n for n, i in INTRINSICS.items() if i.quantities == (f"gridsize_{axis}",)] for axis in AXES}

        def global_of(axis):
            if r.random() < 0.6:
                return self.atom(r.choice(globals_[axis]))
            return self.tuple_component("grid", axis)

        def size_of(axis):
            pick = r.random()
            if pick < 0.3 and sizes[axis]:
                return self.atom(r.choice(sizes[axis]))
            if pick < 0.7:
                return self.tuple_component("gridsize", axis)
            return binary("*", self.atom(f"blockDim.{axis}"), self.atom(f"gridDim.{axis}"))

        if one_row and r.random() < 0.8:
            return global_of("x")
        index = global_of("x")
        if env["gridsize_y"] > 1 or env["gridsize_z"] > 1:
            inner = global_of("y")
            if env["gridsize_z"] > 1:
                inner = binary("+", inner, binary("*", size_of("y"), global_of("z")))
            index = binary("+", index, binary("*", size_of("x"), inner))
        return index

    def tuple_component(self, family, axis):
        """Component `axis` of cuda.grid(k) or cuda.gridsize(k), k drawn."""
        k = AXES.index(axis)
        arity = self.random.choice([n for n in (2, 3) if n > k])
        return self.atom(f"{family}({arity})", k)

    def block_linear_indices(self):
        """(the thread's index in its block, its block's index in the grid):
        injective together."""
        thread = binary("+", self.atom("threadIdx.x"), binary("*", self.atom("blockDim.x"), binary(
            "+", self.atom("threadIdx.y"), binary("*", self.atom("blockDim.y"), self.atom("threadIdx.z")))))
        block = binary("+", self.atom("blockIdx.x"), binary("*", self.atom("gridDim.x"), binary(
            "+", self.atom("blockIdx.y"), binary("*", self.atom("gridDim.y"), self.atom("blockIdx.z")))))
        return [thread, block]

    # Inputs.

    def input_of_kind(self, kind):
        matching = [a for a in self.arrays if not a.output and
                    any(_element_kind(t) == kind for t in ([a.dtype] if a.fields is None else dict(a.fields).values()))]
        if matching and (len([a for a in self.arrays if not a.output]) >= MAX_INPUTS or self.random.random() < 0.6):
            return self.random.choice(matching)
        return self.new_input(kind)

    def new_input(self, kind):
        r = self.random
        dtype = PLAIN_DTYPES[kind] if self.plain else r.choice(DTYPES_OF_KIND[kind])
        layout = r.choice(["C", "F", "A", "0-d"] if self.plain else LAYOUTS)
        ndim = self.ndim_for(layout)
        shape = self.input_shape(ndim, layout)
        fields = self.record_fields(dtype) if layout == "record" else None
        view, signature_layout = self.view_for(layout, shape)
        array = ArrayParam(self.fresh("x"), None if fields else dtype, layout, shape, view, signature_layout,
                           output=False, fields=fields)
        size = int(np.prod(view.base_shape))
        array.values = {field: self.input_values(t, size)
                        for field, t in (fields if fields else [(None, dtype)])}
        self.arrays.append(array)
        return array

    def input_shape(self, ndim, layout):
        r = self.random
        for _ in range(20):
            shape = tuple(r.randint(2, 40) if ndim == 1 else r.randint(2, 12) for _ in range(ndim))
            if np.prod(shape) <= INPUT_ELEMENTS and (layout != "F" or sum(d > 1 for d in shape) >= 2):
                return shape
        return (2,) * ndim

    def input_values(self, dtype, size):
        """Deterministic values of every magnitude the type holds (floats
        and complex parts in eighths, exact in every float type)."""
        r = self.random
        if dtype == "bool":
            return [r.random() < 0.5 for _ in range(size)]
        if dtype in INT_DTYPES:
            lo, hi = int_limits(dtype)
            lo, hi = max(lo, -(1 << 30)), min(hi, 1 << 31)
            return [r.randint(max(lo, -20), min(hi, 20)) if r.random() < 0.7 else r.randint(lo, hi)
                    for _ in range(size)]
        eighths = [r.randint(-512, 512) / 8 for _ in range(size * (2 if dtype in COMPLEX_DTYPES else 1))]
        if dtype in COMPLEX_DTYPES:
            return [complex(a, b) for a, b in zip(eighths[::2], eighths[1::2])]
        return eighths

    def record_fields(self, dtype):
        r = self.random
        fields = [dtype] + [r.choice(DTYPES) for _ in range(r.randint(0, 2))]
        r.shuffle(fields)
        return list(zip(FIELD_NAMES, fields))

    def load(self, kind, allowed, must=None):
        """An element of an input of `kind`, at launch indices (allowed
        ones): directly where they stay in bounds, else modulo the
        dimension."""
        if self.device_parameters is not None:
            return None
        r = self.random
        array = self.input_of_kind(kind)
        fields = [f for f, t in array.fields if _element_kind(t) == kind] if array.fields else [None]
        field = r.choice(fields)
        if array.ndim == 0:
            return Load(array, [], field) if must is None else None
        position = r.randrange(array.ndim)
        index = []
        for dim, size in enumerate(array.shape):
            if dim == position and must is not None:
                component = must
            elif r.random() < 0.7:
                component = self.random_atom(allowed)
            else:
                component = Const("int64", r.randrange(size))
            if component.range.hi >= size:
                component = binary("%", component, Const("int64", size))
            index.append(component)
        return Load(array, index, field, item_syntax=r.random() < 0.5)

    # Expressions.

    def split(self, must, count):
        """`must` at one random position of `count`, None elsewhere."""
        musts = [None] * count
        if must is not None:
            musts[self.random.randrange(count)] = must
        return musts

    def expr(self, kind, depth, allowed=None, must=None):
        """An expression of `kind` ("int", "float", "bool", "complex") whose
        sources are allowed (None: any), with `must` (a launch index) inside
        it where given."""
        for _ in range(6):
            node = self.shape(kind, depth, allowed, must)
            if node is not None and kind_of(node.type) == kind and (allowed is None or node.sources <= allowed):
                return node
        return self.simple(kind, allowed, must)

    def simple(self, kind, allowed, must):
        """What always works: a launch index (or 1) of `kind`."""
        base = must if must is not None else Const("int64", 1)
        if kind == "int":
            return binary("+", base, Const("int64", 1)) if must is not None else base
        if kind == "float":
            return cast("float64", base)
        if kind == "bool":
            return binary("<", base, Const("int64", 3))
        return builtin("complex", [base, Const("int64", 1)])

    def leaf(self, kind, allowed, must):
        r = self.random
        if must is not None:
            return self.coerce(must, kind)
        parameters = [p for p in self.device_parameters or [] if kind_of(p.type) == kind]
        if parameters and r.random() < 0.6:
            return r.choice(parameters)
        if kind == "int":
            pick = r.random()
            if self.loop_indices and pick < 0.2 and self.device_parameters is None:
                return self.loop_indices[-1]
            if pick < 0.55:
                return self.random_atom(allowed)
            if pick < 0.65 and self.device_parameters is None:
                return self.scalar_or_shape()
            if pick < 0.8 and self.device_parameters is None:
                return self.load("int", allowed)
            return Const("int64", r.choice([0, 1, 2, 3, 5, 7, 31, 100, -1, -6]))
        if kind == "float":
            if r.random() < 0.5 and self.device_parameters is None:
                return self.load("float", allowed)
            return Const("float64", r.choice([0.5, -1.25, 3.0, 0.25, 2.0, -0.0]))
        if kind == "bool":
            if r.random() < 0.4 and self.device_parameters is None:
                return self.load("bool", allowed)
            return binary(r.choice(COMPARISONS), self.random_atom(allowed), Const("int64", r.randint(0, 40)))
        if r.random() < 0.5 and self.device_parameters is None:
            return self.load("complex", allowed)
        return builtin("complex", [self.random_atom(allowed), Const("float64", r.choice([1.0, -0.5]))])

    def scalar_or_shape(self):
        r = self.random
        arrays = [a for a in self.arrays if a.ndim]
        if arrays and r.random() < 0.5:
            array = r.choice(arrays)
            return Shape(array, r.randrange(array.ndim))
        return self.new_scalar(r.randint(1, 50))

    def some_type(self, kind):
        """A type to convert to, of `kind`: any, or in a plain program the
        simulator's."""
        return PLAIN_DTYPES[kind] if self.plain else self.random.choice(DTYPES_OF_KIND[kind])

    def new_scalar(self, value):
        dtype = "int64" if self.plain else self.random.choice(["int64", "int64", "int32"])
        scalar = Scalar(self.fresh("n"), dtype, value)
        self.scalars.append(scalar)
        return scalar

    def coerce(self, must, kind):
        """A launch index as a leaf of `kind`."""
        r = self.random
        if kind == "int":
            return must
        if kind == "float":
            return cast(self.some_type("float"), must)
        if kind == "bool":
            return binary(r.choice(COMPARISONS), must, Const("int64", r.randint(0, 40)))
        return builtin("complex", [must, Const("int64", r.randint(-3, 3))])

    def nonzero(self, expr):
        """`expr`, or a value like it that cannot be zero."""
        if expr is None or expr.range is None or not (expr.range.lo <= 0 <= expr.range.hi):
            return expr
        if kind_of(expr.type) == "int":
            return binary("|", expr, Const("int64", 1))
        return binary("+", unary("abs", expr), Const("float64", 1.0))

    def shape(self, kind, depth, allowed, must):
        if depth <= 0 or self.random.random() < 0.2:
            return self.leaf(kind, allowed, must)
        return getattr(self, f"{kind}_shape")(depth, allowed, must)

    def int_shape(self, depth, allowed, must):
        r = self.random

        def sub(kind, m=None):
            return self.expr(kind, depth - 1, allowed, m)
        shape = r.choice(["affine", "binary", "binary", "shift", "minmax", "unary", "cast", "choose", "call",
                          "tuple", "from float", "bool sum", "load"])
        if shape == "affine":  # (i * 3 + 7) // 2
            scaled = binary("*", sub("int", must), Const("int64", r.choice([3, 5, -2, 7])))
            shifted = binary("+", scaled, Const("int64", r.choice([7, -1, 0, 11])))
            return binary("//", shifted, Const("int64", r.choice([2, 3, 4, 7, -3])))
        if shape == "binary":
            op = r.choice(["+", "-", "*", "//", "%", "&", "|", "^"])
            first, second = self.split(must, 2)
            right = sub("int", second) if second is not None or r.random() < 0.6 else \
                Const("int64", r.choice([1, 2, 3, 5, 7, 31, -4]))
            if op in ("//", "%"):
                right = self.nonzero(right)
            return binary(op, sub("int", first), right)
        if shape == "shift":
            first, second = self.split(must, 2)
            op = r.choice(["<<", ">>"])
            count = binary("&", sub("int", second), Const("int64", 15 if op == "<<" else 31))
            return binary(op, sub("int", first), count)
        if shape == "minmax":
            first, second = self.split(must, 2)
            return builtin(r.choice(["min", "max"]), [sub("int", first), sub("int", second)])
        if shape == "unary":
            op = r.choice(["neg", "~", "abs"])
            operand = sub("int", must)
            if op == "abs":
                operand = binary("-", operand, Const("int64", r.randint(0, 20)))
            return unary(op, operand)
        if shape == "cast":
            return cast(self.some_type("int"), sub("int", must))
        if shape == "choose":
            test, then, otherwise = self.split(must, 3)
            return choose(sub("bool", test), sub("int", then), sub("int", otherwise))
        if shape == "call":
            return self.device_call("int", depth, allowed, must)
        if shape == "tuple":
            return self.tuple_item("int", depth, allowed, must)
        if shape == "from float":
            return cast(self.some_type("int"), sub("float", must))
        if shape == "bool sum" and not self.plain:  # NumPy's bools add as bools
            first, second = self.split(must, 2)
            return binary("+", sub("bool", first), sub("bool", second))
        return self.load("int", allowed, must) if self.device_parameters is None else None

    def float_shape(self, depth, allowed, must):
        r = self.random

        def sub(kind, m=None):
            return self.expr(kind, depth - 1, allowed, m)
        shape = r.choice(["convert", "divide", "binary", "scale", "product", "floor", "minmax", "unary",
                          "choose", "part", "half", "affine", "call", "load"])
        first, second = self.split(must, 2)
        if shape == "convert":
            return cast(self.some_type("float"), sub(r.choice(["int", "float"]), must))
        if shape == "divide":  # i / 3
            return binary("/", sub("int", first), self.nonzero(sub("int", second)))
        if shape == "binary":
            return binary(r.choice(["+", "-"]), sub("float", first), sub(r.choice(["float", "int"]), second))
        if shape == "scale":
            return binary("*", sub("float", must), Const("float64", r.choice([0.5, 2.0, 0.25, -1.0, 1.5, 3.0])))
        if shape == "product":
            return binary("*", sub("float", first), sub(r.choice(["float", "int"]), second))
        if shape == "floor":
            return binary(r.choice(["//", "%"]), sub("float", first), self.nonzero(sub(r.choice(["float", "int"]),
                                                                                       second)))
        if shape == "minmax":
            return builtin(r.choice(["min", "max"]), [sub("float", first), sub("float", second)])
        if shape == "unary":
            return unary(r.choice(["neg", "abs"]), sub("float", must))
        if shape == "choose":
            test, then, otherwise = self.split(must, 3)
            return choose(sub("bool", test), sub("float", then), sub("float", otherwise))
        if shape == "part":
            return Part(sub("complex", must), r.choice(["real", "imag"]))
        if shape == "half" and not self.plain:  # float16 arithmetic
            op = r.choice(["+", "-", "*"])
            right = cast("float16", sub(r.choice(["int", "float"]), second)) if second is not None or \
                r.random() < 0.5 else cast("float16", Const("float64", r.choice([0.5, 2.0, -1.5])))
            return binary(op, cast("float16", sub(r.choice(["int", "float"]), first)), right)
        if shape == "affine":  # i * 0.5 + 1.25
            return binary("+", binary("*", sub("float", must), Const("float64", 0.5)), Const("float64", 1.25))
        if shape == "call":
            return self.device_call("float", depth, allowed, must)
        return self.load("float", allowed, must) if self.device_parameters is None else None

    def bool_shape(self, depth, allowed, must):
        r = self.random

        def sub(kind, m=None):
            return self.expr(kind, depth - 1, allowed, m)
        shape = r.choice(["compare", "compare", "parity", "not", "and or", "load"])
        first, second = self.split(must, 2)
        if shape == "compare":
            kind = r.choice(["int", "int", "float"])
            return binary(r.choice(COMPARISONS), sub(kind, first), sub(kind, second))
        if shape == "parity":  # i % 2 == 1
            return binary("==", binary("%", sub("int", must), Const("int64", r.choice([2, 3]))), Const("int64", 1))
        if shape == "not":
            return unary("not", sub("bool", must))
        if shape == "and or":
            return binary(r.choice(["and", "or"]), sub("bool", first), sub("bool", second))
        return self.load("bool", allowed, must) if self.device_parameters is None else None

    def complex_shape(self, depth, allowed, must):
        r = self.random

        def sub(kind, m=None):
            return self.expr(kind, depth - 1, allowed, m)
        shape = r.choice(["build", "build", "binary", "scale", "neg", "load"])
        first, second = self.split(must, 2)
        if shape == "build":  # complex(i, 1)
            return builtin("complex", [sub(r.choice(["int", "float"]), first), sub(r.choice(["int", "float"]),
                                                                                     second)])
        if shape == "binary":
            return binary(r.choice(["+", "-"]), sub("complex", first), sub(r.choice(["complex", "int", "float"]),
                                                                           second))
        if shape == "scale":
            return binary("*", sub("complex", must), Const("int64", r.choice([2, -1, 3])))
        if shape == "neg":
            return unary("neg", sub("complex", must))
        return self.load("complex", allowed, must) if self.device_parameters is None else None

    def tuple_item(self, kind, depth, allowed, must):
        """`(a, b)[k]`: a tuple built and indexed."""
        r = self.random
        count = r.randint(2, 3)
        chosen = r.randrange(count)
        elements = [self.expr(kind if k == chosen else r.choice(["int", "float", "bool"]), depth - 1, allowed,
                              must if k == chosen else None) for k in range(count)]
        return Item(TupleOf(elements), chosen)

    def device_call(self, kind, depth, allowed, must):
        """A device function of one or two arguments, whose body may read
        launch indices itself."""
        if self.device_parameters is not None:
            return None
        r = self.random
        count = r.randint(1, 2)
        musts = self.split(must, count)
        arguments = [self.expr(r.choice(["int", "int", "float"]), depth - 1, allowed, m) for m in musts]
        parameters = [Parameter(f"p{k}", a) for k, a in enumerate(arguments)]
        self.device_parameters = parameters
        try:
            body = self.expr(kind, max(depth - 1, 1), allowed)
        finally:
            self.device_parameters = None
        return Call(self.new_device(parameters, body), arguments)

    # Arrays.

    def ndim_for(self, layout, intrinsic=None):
        r = self.random
        if layout == "0-d":
            return 0
        if layout == "F":
            return r.choice([2, 3])
        if intrinsic is not None and INTRINSICS[intrinsic].arity and r.random() < 0.5:
            return INTRINSICS[intrinsic].arity
        if layout == "record":
            return r.choice([1, 1, 2])
        return r.choice([1, 1, 2, 3])

    def view_for(self, layout, shape):
        """How an argument of `shape` and coverage layout `layout` is cut
        from its base; and its layout in the signature."""
        r = self.random
        ndim = len(shape)
        if layout == "0-d":
            if r.random() < 0.5:
                return View(()), r.choice(["C", "A"])
            length = r.randint(2, 5)
            return View((length,), slices=(r.randrange(length), Ellipsis)), r.choice(["C", "A"])
        if layout in ("C", "F") or layout == "record" and r.random() < 0.6:
            order = "F" if layout == "F" else "C"
            if r.random() < 0.5:
                return View(tuple(shape), order), order
            # A contiguous block of a larger base, cut along the slowest axis.
            axis = ndim - 1 if order == "F" else 0
            extra, start = r.randint(1, 4), r.randint(0, 2)
            base = list(shape)
            base[axis] += extra + start
            slices = [slice(None)] * ndim
            slices[axis] = slice(start, start + shape[axis])
            return View(tuple(base), order, tuple(slices)), order
        if layout == "A":
            # The whole base, reversed along an axis or (2-D, 3-D) transposed
            # (in a plain program, contiguous: transposed, or as it is).
            if self.plain and ndim == 1:
                return View(tuple(shape)), "A"
            if ndim >= 2 and (self.plain or r.random() < 0.6):
                axes = tuple(reversed(range(ndim))) if self.plain else \
                    tuple(r.choice([p for p in itertools.permutations(range(ndim)) if p != tuple(range(ndim))]))
                base = [0] * ndim
                for position, axis in enumerate(axes):
                    base[axis] = shape[position]
                return View(tuple(base), r.choice(["C", "F"]), axes=axes), "A"
            slices = [slice(None)] * ndim
            slices[r.randrange(ndim)] = slice(None, None, -1)
            return View(tuple(shape), "C", tuple(slices)), "A"
        # A sub-sampled view: steps of 2 or 3 (some negative) along some axes.
        steps = [r.choice([1, 2, 3, -1, -2]) for _ in range(ndim)]
        if all(abs(s) == 1 for s in steps):
            steps[r.randrange(ndim)] = r.choice([2, 3, -2])
        base, slices = [], []
        for size, step in zip(shape, steps):
            offset, extra = r.randint(0, 2), r.randint(0, 2)
            span = abs(step) * (size - 1) + 1
            length = offset + span + extra
            base.append(length)
            if step > 0:
                slices.append(slice(offset, offset + span, step))
            else:
                first = length - 1 - offset
                stop = first - span
                slices.append(slice(first, stop if stop >= 0 else None, step))
        return View(tuple(base), "C", tuple(slices)), "A"

    def new_output(self, dtype, layout, shape):
        fields = self.record_fields(dtype) if layout == "record" else None
        view, signature_layout = self.view_for(layout, shape)
        array = ArrayParam(self.fresh("o"), None if fields else dtype, layout, tuple(shape), view, signature_layout,
                           output=True, fields=fields)
        self.arrays.append(array)
        return array

    # Stores.

    def store_plan(self, cell):
        """Stores realising `cell` = (intrinsic or None, dtype, layout, form):
        a few tries at a free plan, then one that always works."""
        for attempt in range(5):
            if self.try_plan(cell, safe=attempt >= 3):
                return
        if not self.try_plan(cell, safe=True, fallback=True):
            raise AssertionError(f"seed {self.seed}: no plan realises {cell}")

    def try_plan(self, cell, safe, fallback=False):
        r = self.random
        intrinsic, dtype, layout, form = cell
        alive = self.tracer.alive
        ndim = self.ndim_for(layout, intrinsic if form == "index" else None)
        if fallback and layout != "record" and form != "index":
            ndim = min(ndim, 1)
        grid_stride = ndim == 1 and form != "index" and not safe and r.random() < GRID_STRIDE_SHARE
        if grid_stride:
            return self.grid_stride_plan(cell)
        # The index.
        if ndim == 0:
            index = []
        elif form == "index":
            index = self.index_with(intrinsic, ndim, plain=fallback)
        elif safe or r.random() < 0.5:
            index = self.linear_plan_index(ndim)
        else:
            index = self.axes_index(ndim)
        components = Store(None, index, None, False).index_components()
        values = [self.tracer.value(c) for c in components]
        if any(v is None for v in values) or any((v[alive] < 0).any() for v in values):
            return False
        # The shape, and the guards of dimensions cut short.
        shape, short = self.output_shape([v[alive] for v in values], fallback)
        if shape is None:
            return False
        running = alive.copy()
        for dim in short:
            running &= values[dim] < shape[dim]
        single = None
        if ndim == 0 and (safe or r.random() < 0.6):
            # One thread stores into the 0-d array: `if <its global index> == k:`.
            linear = self.linear_index()
            chosen = self.tracer.value(linear)
            single = binary("==", linear, Const("int64", int(r.choice(chosen[alive]))))
            running &= self.tracer.value(single).astype(bool)
        owned = self.injective(values, running, shape)
        allowed = None if owned else frozenset(q for c in components if c.quantity is not None
                                               for q in [c.quantity]) - UNIFORM_QUANTITIES
        row = None
        if owned and ndim >= 2 and isinstance(index[-1], Const) and len(index) == len(components) and \
                not fallback and r.random() < ROW_LOOP_SHARE:
            # The last dimension (padding) becomes a row each thread fills.
            row = LoopIndex(self.fresh("g"), r.randint(2, 4))
            index, shape[-1] = index[:-1] + [row], row.length
        # The value.
        self.loop_indices += [row] if row else []
        try:
            value = self.store_value(cell, allowed, dtype)
        finally:
            self.loop_indices = [loop for loop in self.loop_indices if loop is not row]
        if value is None:
            return False
        array = self.new_output(dtype, layout, shape)
        if owned and form != "index" and not fallback and len(index) == len(components):
            index = [self.index_variant(c, array, dim) for dim, c in enumerate(index)]
        field = array.fields and next(f for f, t in array.fields if t == dtype)
        stores = [Store(array, index, value, owned, field, item_syntax=r.random() < 0.5)]
        if array.fields and len(array.fields) > 1 and r.random() < 0.4:
            other, other_type = r.choice([(f, t) for f, t in array.fields if f != field])
            other_value = self.store_value((None, other_type, layout, "value"), allowed, other_type)
            if other_value is not None:
                stores.append(Store(array, index, other_value, owned, other, item_syntax=r.random() < 0.5))
        if r.random() < HELPER_SHARE:
            store = r.choice(stores)
            store.helper = self.new_device([])
            store.helper.store = store
        self.emit_stores(stores, components, short, single, shape, row)
        return True

    def index_variant(self, component, array, dim):
        """A component of an owned store's index as it is, counted from the
        end (`i - a.shape[0]`, negative: Numba wraps it around), or in a
        narrower or unsigned integer type it fits (`np.uint8(i)`), which
        the index must then widen by its own signedness."""
        r = self.random
        pick = r.random()
        if pick < 0.1:
            return binary("-", component, Shape(array, dim))
        if pick < 0.2 and not self.plain:
            fits = [t for t in INT_DTYPES if _stored_exactly(component, t)]
            return cast(r.choice(fits), component) if fits else component
        return component

    def injective(self, values, running, shape):
        keys = np.zeros(int(running.sum()), np.int64)
        for dim, v in enumerate(values):
            keys = keys * shape[dim] + v[running]
        return len(np.unique(keys)) == len(keys)

    def output_shape(self, values, fallback):
        """Each dimension covers its index's values, some with room to
        spare, some cut short (then guarded), within MAX_ELEMENTS; and the
        dimensions cut short."""
        r = self.random
        shape, short = [], []
        for dim, v in enumerate(values):
            lo, hi = int(v.min()), int(v.max())
            pick = r.random()
            if not fallback and pick < 0.25 and hi > lo:
                shape.append(r.randint(lo + 1, hi))
                short.append(dim)
            elif pick < 0.55:
                shape.append(hi + 1 + r.randint(1, 3))
            else:
                shape.append(hi + 1)
        while np.prod(shape) > MAX_ELEMENTS:
            dim = max(range(len(shape)), key=lambda d: shape[d])
            lo = int(values[dim].min())
            if shape[dim] <= lo + 1 or shape[dim] == 1:
                return None, []
            shape[dim] = max(lo + 1, shape[dim] // 2)
            if dim not in short:
                short.append(dim)
        while len(shape) >= 2 and sum(d > 1 for d in shape) < 2:
            # So that no F array is also C-contiguous (and typed C).
            shape[shape.index(1)] += 1
        return shape, sorted(short)

    def index_with(self, name, ndim, plain=False):
        """An index with intrinsic `name` as one of its components (for a
        tuple intrinsic of `ndim` components, maybe as the whole index);
        the others fill in with launch indices or constants."""
        r = self.random
        intrinsic = INTRINSICS[name]
        if intrinsic.arity == ndim and r.random() < 0.5 and not plain:
            return [self.atom(name)]
        position = r.randrange(ndim)
        index = []
        for dim in range(ndim):
            if dim == position:
                index.append(self.scalar_atom(name))
            elif plain or r.random() < 0.4:
                index.append(Const("int64", 0))
            else:
                index.append(self.random_atom())
        if ndim >= 2 and r.random() < 0.25 and not plain:
            var = Var(self.fresh(), TupleOf(index))
            self.emit(Let(var))
            return [var]
        return index

    def linear_plan_index(self, ndim):
        """An injective index: the grid's linear index (split in two, or
        padded with zeros), or the pair (thread in block, block)."""
        r = self.random
        if ndim >= 2 and r.random() < 0.25:
            return self.block_linear_indices() + [Const("int64", 0)] * (ndim - 2)
        linear = self.linear_index()
        if ndim >= 2 and r.random() < 0.5:
            width = Const("int64", r.randint(2, 9))
            return [binary("//", linear, width), binary("%", linear, width)] + [Const("int64", 0)] * (ndim - 2)
        return [linear] + [Const("int64", 0)] * (ndim - 1)

    def axes_index(self, ndim):
        """Launch indices per dimension (cuda.grid(k) as a whole, sometimes):
        injective or not, as they fall."""
        r = self.random
        if ndim in (2, 3) and r.random() < 0.4:
            return [self.atom(f"grid({ndim})")]
        return [self.random_atom() for _ in range(ndim)]

    def store_value(self, cell, allowed, dtype):
        """A value for a store into `dtype` that realises the cell's form:
        the intrinsic itself, arithmetic over it, or anything; its sources
        allowed."""
        r = self.random
        intrinsic, _, _, form = cell
        must = None
        if intrinsic is not None and form in ("value", "arithmetic"):
            quantities = INTRINSICS[intrinsic].quantities
            component = r.randrange(len(quantities)) if INTRINSICS[intrinsic].arity else None
            quantity = quantities[component or 0]
            if allowed is not None and quantity not in UNIFORM_QUANTITIES and quantity not in allowed:
                return None
            must = self.atom(intrinsic, component)
            if form == "value":
                return must
        for _ in range(4):
            kind = r.choice(VALUE_KINDS[_element_kind(dtype)])
            value = self.expr(kind, r.randint(1, 3) if must is not None else r.randint(0, 3), allowed, must)
            # The launch index must end up inside arithmetic (not carried
            # as it is, by a tuple or a conditional's branch).
            if _converted_range(value.range, value.type, dtype) is not None and \
                    (must is None or (intrinsic, False) in value.uses()) and \
                    (not self.plain or _stored_exactly(value, dtype)):
                return value
        if must is not None:
            return binary("+", must, Const("int64", 1))
        return Const("int64", 1)

    def emit_stores(self, stores, components, short, single, shape, row=None):
        """The stores (in the loop over `row`, where given) under their
        guards: `if i < a.shape[0]:`, `if i < n:`, an early `if i >= n:
        return`, a single thread's, or none."""
        r = self.random
        array = stores[0].array
        tests = [single] if single is not None else []
        for dim in short:
            spellings = ["shape"] + ["len"] * (dim == 0) + ["size"] * (array.ndim == 1)
            limit = Shape(array, dim, r.choice(spellings)) if r.random() < 0.5 else self.new_scalar(shape[dim])
            if len(short) == 1 and single is None and r.random() < EARLY_RETURN_SHARE and \
                    self.keeps_most_threads(components[dim], limit):
                self.emit(EarlyReturn(binary(">=", components[dim], limit)))
                continue
            tests.append(binary("<", components[dim], limit))
        if not tests and components and r.random() < 0.15:
            # A guard that holds for every thread: guarded and unguarded alike.
            dim = r.randrange(len(components))
            tests.append(binary("<", components[dim], Shape(array, dim)))
        if r.random() < 0.08:
            # A condition on data, which some threads meet.
            tests.append(self.data_condition(None if stores[0].owned else
                                             frozenset().union(*(c.sources for c in components))))
        body = list(stores)
        if r.random() < 0.2:
            var = Var(self.fresh(), stores[0].value)
            stores[0].value = var
            body.insert(0, Let(var))
        if row is not None:
            stop = Const("int64", row.length) if r.random() < 0.5 else Shape(array, array.ndim - 1)
            body = [ForRange(row, Const("int64", 0), stop, Const("int64", 1), body)]
        if not tests:
            for statement in body:
                self.emit(statement)
            return
        test = tests[0]
        for more in tests[1:]:
            test = binary("and", test, more)
        self.emit(Guarded(test, body))

    def data_condition(self, allowed):
        r = self.random
        if r.random() < 0.4:
            return self.load("bool", allowed)
        kind = r.choice(["int", "float"])
        return binary(r.choice(["!=", ">", "<="]), self.load(kind, allowed), Const("int64", r.randint(-5, 5)))

    def keeps_most_threads(self, component, limit):
        values = self.tracer.value(component)
        alive = self.tracer.alive
        return (values[alive] < limit.value if isinstance(limit, Scalar) else
                values[alive] < limit.array.shape[limit.dim]).mean() >= 0.5

    def grid_stride_plan(self, cell):
        """`for k in range(<global linear index>, a.shape[0], <threads in the
        grid>): a[k] = ...`: every k belongs to one thread."""
        r = self.random
        intrinsic, dtype, layout, form = cell
        threads = self.launch.blocks * self.launch.threads
        length = threads * r.randint(1, 2) + r.randint(0, threads)
        if length > MAX_ELEMENTS * 2:
            length = threads + r.randint(0, 7)
        start = self.linear_index()
        if self.launch.environment["gridsize_y"] == 1 and self.launch.environment["gridsize_z"] == 1 and \
                r.random() < 0.6:
            step = r.choice([self.atom("gridsize(1)"), self.tuple_component("gridsize", "x"),
                             binary("*", self.atom("blockDim.x"), self.atom("gridDim.x"))])
        else:
            size = self.atom("gridsize(3)") if r.random() < 0.5 else None
            step = binary("*", binary("*", Item(size, 0) if size else self.tuple_component("gridsize", "x"),
                                      Item(size, 1) if size else self.tuple_component("gridsize", "y")),
                          Item(size, 2) if size else self.tuple_component("gridsize", "z"))
        if step is None or start is None:
            return False
        array = self.new_output(dtype, layout, (length,))
        loop_var = LoopIndex(self.fresh("g"), length)
        self.loop_indices.append(loop_var)
        try:
            value = self.store_value(cell, None, dtype)
        finally:
            self.loop_indices.pop()
        if value is None:
            return False
        field = array.fields and next(f for f, t in array.fields if t == dtype)
        store = Store(array, [loop_var], value, True, field, item_syntax=r.random() < 0.5)
        stop = Shape(array, 0) if r.random() < 0.6 else self.new_scalar(length)
        self.emit(ForRange(loop_var, start, stop, step, [store]))
        return True

    # The program.

    def program(self):
        r = self.random
        cells = list(self.focus)
        for _ in range(r.randint(*EXTRA_PLANS)):
            layouts = ["C", "F", "A", "0-d"] if self.plain else LAYOUTS
            intrinsic, dtype, layout, form = (r.choice(list(INTRINSICS)), r.choice(DTYPES), r.choice(layouts),
                                              r.choice(FORMS))
            cells.append((intrinsic, dtype, layout, "value" if layout == "0-d" and form == "index" else form))
        r.shuffle(cells)
        for cell in cells:
            self.store_plan(cell)
        parameters = self.arrays + self.scalars
        r.shuffle(parameters)
        program = Program(self.seed, self.launch, parameters, self.devices, self.statements, self.focus)
        return program


def generate(seed):
    """The program of `seed`."""
    return Generator(seed).program()


# --- Programs ----------------------------------------------------------------

FLOAT16_HELPER = '''\
@njit
def {name}_f16(x):
    """x rounded to the nearest float16 (ties to even), as a float64: the
    GPU's float16 results and conversions, which Numba's CPU target lacks."""
    a = abs(x)
    if a != a or a == 0.0 or a == math.inf:
        return x
    if a >= 65520.0:
        return math.copysign(math.inf, x)
    ulp = math.ldexp(1.0, max(math.frexp(a)[1] - 11, -24))
    units = a / ulp
    whole = math.floor(units)
    if units - whole > 0.5 or (units - whole == 0.5 and whole % 2.0 == 1.0):
        whole += 1.0
    return math.copysign(whole * ulp, x)
'''

# What the simulator computes as compiled Numba does: Python ints and
# floats, and NumPy scalars of these types (NumPy 2 keeps narrower types
# narrow, and float32 with a Python float float32).
SIMULATOR_TYPES = ("int64", "float64", "bool", "complex128")


class Program:
    """One generated program: see the module's docstring, and oracles.py
    for how the harness runs it."""

    def __init__(self, seed, launch, parameters, devices, statements, focus):
        self.seed = seed
        self.launch_shape = launch
        self.parameters = parameters
        self.devices = devices
        self.statements = statements
        self.focus = focus
        self.blocks = launch.blocks
        self.threads = launch.threads
        self.signature = "void(" + ", ".join(
            p.signature() if isinstance(p, ArrayParam) else p.type for p in parameters) + ")"
        self.cells = frozenset(program_cells(statements))
        self.simulator_judges = simulator_agrees(self)

    def launch(self):
        """(grid, block), as `kernel[grid, block]` takes them."""
        return self.launch_shape.configuration()

    def coverage(self):
        return set(self.cells)

    def render(self, name, host=False):
        r = Renderer(name, host)
        lines = []
        for device in self.devices:
            lines += device.render(r) + [""]
        if host:
            names = [n for p in self.parameters for n in (p.host_names() if isinstance(p, ArrayParam) else [p.name])]
            lines += ["@njit", f"def {name}({', '.join(LAUNCH_PARAMETERS + tuple(names))}):"]
        else:
            lines += [f'@cuda.jit("{self.signature}")', f"def {name}({', '.join(p.name for p in self.parameters)}):"]
        lines += [line for statement in self.statements for line in statement.render(r, "    ")]
        text = "\n".join(lines) + "\n"
        if host:
            helper = FLOAT16_HELPER.format(name=name) + "\n" if f"{name}_f16(" in text else ""
            text = "import math\n\n" + helper + text
        return text

    def arguments(self):
        """Fresh (kernel arguments, {name: output base array})."""
        arguments, outputs = [], {}
        for parameter in self.parameters:
            if isinstance(parameter, Scalar):
                arguments.append(np.dtype(parameter.type).type(parameter.value))
                continue
            argument, base = parameter.build()
            arguments.append(argument)
            if parameter.output:
                outputs[parameter.name] = base
        return arguments, outputs

    def run_host(self, function, arguments):
        """Runs the host rendering's kernel `function` for every thread of
        the launch, in order, over `arguments` (as arguments() made them)."""
        host, write_backs = [], []
        for parameter, argument in zip(self.parameters, arguments):
            if isinstance(parameter, Scalar):
                host.append(argument)
                continue
            parts, backs = parameter.host_arguments(argument)
            host += parts
            write_backs += backs
        dimensions = [np.int32(v) for v in self.launch_shape.padded(self.launch_shape.block)
                      + self.launch_shape.padded(self.launch_shape.grid)]
        for tid, ctaid in self.launch_shape.points():
            function(*[np.int32(v) for v in tid], *[np.int32(v) for v in ctaid], *dimensions, *host)
        run_write_backs(write_backs)

    def expressions(self):
        """Every expression node of the kernel and its device functions."""
        for statement in walk_statements(self.statements):
            for expr in statement.expressions():
                yield from expr.walk()
        for device in self.devices:
            if device.body is not None:
                yield from device.body.walk()


def program_cells(statements):
    """The coverage cells of a kernel's statements: each store's index and
    value, and each load's index, by the intrinsics inside."""
    cells = set()

    def loads(expr):
        for node in expr.walk():
            if isinstance(node, Load):
                layout, dtype = node.array.layout, node.array.element_type(node.field)
                for component in node.index:
                    for name, direct in component.uses():
                        cells.add((name, dtype, layout, "index" if direct else "arithmetic"))

    def visit(body, loop_uses):
        for statement in body:
            for expr in statement.expressions():
                loads(expr)
            if isinstance(statement, Store):
                dtype, layout = statement.array.element_type(statement.field), statement.array.layout
                for component in statement.index:
                    for name, direct in component.uses():
                        cells.add((name, dtype, layout, "index" if direct else "arithmetic"))
                for name, direct in statement.value.uses():
                    cells.add((name, dtype, layout, "value" if direct else "arithmetic"))
                for name in loop_uses:
                    cells.add((name, dtype, layout, "arithmetic"))
            if isinstance(statement, ForRange):
                inner = loop_uses + [n for e in (statement.start, statement.step) for n, _ in e.uses()]
                visit(statement.body, inner)
            elif isinstance(statement, Guarded):
                visit(statement.body, loop_uses)

    visit(statements, [])
    return cells


def simulator_agrees(program):
    """Whether Numba's simulator computes what compiled Numba does: only
    where every value is a Python int or float (launch indices are, in the
    simulator) or a NumPy int64, float64, bool or complex128, no bool is
    added or negated (NumPy's bools stay bools), min and max take one type,
    every integer stored fits its array (NumPy 2 refuses a Python int out
    of range), no structured array is written (the simulator's records
    take no attribute stores) and every array is contiguous (it copies no
    other to its device)."""
    if any(isinstance(p, ArrayParam) and (p.fields is not None or not p.view.contiguous())
           for p in program.parameters):
        return False
    if any(isinstance(p, Scalar) and p.type not in SIMULATOR_TYPES for p in program.parameters):
        return False
    for node in program.expressions():
        if isinstance(node, (Read, Var, Item, TupleOf, Parameter, LoopIndex, Shape)) or \
                isinstance(node, Call) and isinstance(node.function, DeviceFunction):
            continue
        if isinstance(node, Const) and node.type in SIMULATOR_TYPES:
            continue
        if isinstance(node, Load):
            if node.type not in SIMULATOR_TYPES:
                return False
            continue
        if node.type not in SIMULATOR_TYPES and node.type != "int32":
            return False
        operands = node.children()
        if isinstance(node, (Binary, Unary)) and node.op not in COMPARISONS + ("and", "or", "not") and \
                any(o.type == "bool" for o in operands):
            return False
        if isinstance(node, Call) and node.function in ("min", "max") and \
                len({kind_of(o.type) for o in operands}) > 1:
            return False
    return all(_stored_exactly(s.value, s.array.element_type(s.field))
               for s in walk_statements(program.statements) if isinstance(s, Store))


def check_program(program):
    """What makes `program` have more than one meaning (races, indices out
    of bounds, a store's value depending on what its index does not), found
    by running its statements over every thread again; and any array or
    field with more than one store statement. Empty when none."""
    tracer = StoreTracer(program.launch_shape)
    tracer.run(program.statements)
    problems = tracer.problems()
    targets = collections.Counter((id(s.array), s.field) for s in walk_statements(program.statements)
                                  if isinstance(s, Store))
    problems += [f"{count} store statements into one array or field" for count in targets.values() if count > 1]
    return problems
