"""Random kernels for differential testing, as trees that render to Python.

A program is a kernel and up to three device functions over a fixed set of
input arrays, one of each element type the generator covers:

    @cuda.jit("void(int8[:], uint16[:], int32[:], int64[:], uint64[:],
                    float32[:], float64[:], int64[:], float64[:])")
    def kernel(a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f):
        t = cuda.grid(1)
        ...

Every thread starts by binding each local variable (so that no read is of
an unbound variable), runs a random body, and ends by storing every
variable into its own slots of `out_i` (integers and bools) and `out_f`
(floats): a lost or wrong store shows in the output. A program runs as one
block of THREADS threads (some, of WARP_THREADS: a whole warp) or, one in
five, as MANY_BLOCKS of them, which the CPU engine hands to its workers.
Some launch blocks and grids of two or three dimensions of the same sizes,
numbering their threads as the 1-D launch does (linear_thread_index).

The body mixes structured control flow nested a few levels deep (`for`
over `range` with any step, `while` and `while True`, `break` and
`continue` at any level, loop `else` clauses, `if`/`elif`/`else`, early
`return`), short-circuit and conditional expressions (also as loop
conditions), arithmetic, comparisons, shifts and bitwise operations over
every integer width and float32/float64 (NumPy casts such as `np.int16(x)`
set the widths; Numba's rules then type the mixes), `abs`, `min`, `max`,
tuples (built, indexed by constants and at run time, unpacked, looped
over with `for`), `cuda.local.array` (filled, read,
insertion-sorted), device functions with early returns (some calls
passing trailing arguments as an unpacked tuple, `f(a, *(b, c))`; some
defined inside the kernel, reading its variables, arrays and thread index
as they are at each call), and integer
atomics on slots every thread of the grid updates (AtomicUpdate) or, in a
synchronizing kernel, every thread of the block (SHARED_ATOMICS).

Programs are valid, terminate and have one meaning, by construction:

  * every loop is bounded: `range` with small bounds, and every `while`
    counts its iterations in a variable of its own, incremented first
    thing in the body (so that `continue` cannot skip it) and tested in
    the condition (or by a `break` at the top of a `while True`);
  * every index is in bounds: `x % n` with n the array's length, which
    Python's (and Numba's) modulo makes non-negative;
  * no division or modulo by zero (`x // (d if d != 0 else 3)`), shifts
    by 0..31 only, and no conversion of a float to an integer (LLVM leaves
    out-of-range conversions undefined, so Numba gives no single answer);
  * integer variables are only ever assigned integers, so that shifts and
    bitwise operations stay valid after the types of a merge unify.

Some programs synchronize: their body is a sequence of phases separated by
`cuda.syncthreads()` (or `syncthreads_count`/`_and`/`_or` of an integer,
whose result a variable keeps), some phases inside a loop whose trip count
every thread shares (some plain barriers are `cuda.syncwarp(mask)`: the
block is one warp), with two shared arrays, `sh_i` (int64) and `sh_f`
(float64), each two buffers of one slot per thread. They are race-free by construction:
the first phase fills every thread's own slots; after it, a phase writes
only the thread's own slot of one buffer and reads any slot of the other
(and its own slots), and the next phase swaps the buffers. Barriers sit
where every thread reaches them (no `return` before the last one, no
`break` out of a loop that holds one), as CUDA requires.

The tree renders twice: as the CUDA kernel Kiln and Numba's simulator run,
and as `@numba.njit` functions (the kernel body becomes a function of the
thread index, local arrays become `np.zeros`), which give Numba's compiled
semantics exactly; see oracles.py for why both are needed. A synchronizing
kernel becomes an njit generator that yields at each barrier (its
predicate, for a reducing one); run_threads() steps every thread's
generator to the barrier in turn, as a block's threads meet at it.
"""

import dataclasses
import inspect
import random
import re

import numpy as np

import numba_types

ARRAY_LENGTH = 16
THREADS = 8
# Some programs run blocks of a whole warp instead, so that every lane of
# it is active: shuffles may then read past either end of the block
# (`shfl_down_sync` too), and votes and counts see 32 lanes.
WARP_THREADS = 32
WARP_THREADS_SHARE = 0.15
SHARED_ARRAYS = {"sh_i": "int64", "sh_f": "float64"}
# What a reducing barrier or a ballot gives the host rendering, in `sync`:
# the count, AND and OR of the block's predicates, and the ballot of them.
SYNC_RESULTS = ("count", "and", "or", "ballot")
# Where the host rendering exchanges values across a warp: what each lane
# puts in, and the copy every lane reads once all have put theirs.
EXCHANGE_ARRAYS = {"xch_i": "int64", "xch_f": "float64", "got_i": "int64", "got_f": "float64"}
# Integer atomics the kernels apply to the slots of s_i after its scratch,
# one slot per operation: each is commutative and associative over int64
# (wrapping), so that the slot's final value is the same in whatever order
# the grid's threads run. (Their old values, and float atomics, depend on
# that order.)
ATOMIC_OPS = ("add", "sub", "min", "max", "and_", "or_", "xor")
ATOMIC_UPDATES = {"add": "{old} + {value}", "sub": "{old} - {value}", "min": "min({old}, {value})",
                  "max": "max({old}, {value})", "and_": "{old} & {value}", "or_": "{old} | {value}",
                  "xor": "{old} ^ {value}"}
# The share of a kernel's statements that are atomics: drawn from a stream
# of their own, so that the rest of a program is what the seed gave before.
ATOMIC_SHARE = 0.02
# Synchronizing programs also apply them to SHARED_ATOMICS, a shared int64
# array of one slot per operation, which thread k sets first (k < its
# length). Phases that write buffer 1 may update it and phases that write
# buffer 0 (but the first) may read it: consecutive phases alternate their
# buffers, so a barrier always separates the updates from the reads.
SHARED_ATOMICS = "sh_a"
# The share of a read phase's integer loads that read SHARED_ATOMICS.
SHARED_ATOMIC_LOAD_SHARE = 0.1
# The share of programs that synchronize.
SYNCHRONIZING_SHARE = 0.3
# Of the programs that do not synchronize, those whose kernel defines a
# device function inside itself.
NESTED_FUNCTION_SHARE = 0.5
# Of those, the ones written as a lambda of one expression assigned to a
# variable (`d1 = lambda p0: ...`), which calls read as the variables are
# when called, as those of a `def`.
LAMBDA_SHARE = 0.4
# The device functions defined beside the kernel that may return None early
# (a bare `return` under a condition): their result is optional
# (OptionalType), which callers pass through OR_DEFAULT.
OPTIONAL_RESULT_SHARE = 0.3
# The device function that gives an optional result's value, or a default
# where it is None; defined once in a program that needs it.
OR_DEFAULT = '''{decorator}
def or_default(value, default):
    if value is None:
        return default
    return value
'''
# Some programs run as a grid of this many blocks of THREADS threads: more
# threads than the CPU engine runs on the calling thread, so that its
# workers run them, a block after another in each worker's frames.
MANY_BLOCKS = 80
MANY_BLOCKS_SHARE = 0.2
# Some programs launch blocks and grids of two or three dimensions, whose
# threads the kernel numbers linearly (x fastest, as CUDA numbers a
# block's lanes), so that `t` and the lanes are those of the 1-D launch.
BLOCK_SHAPES = {THREADS: {2: [(4, 2), (2, 4), (8, 1), (1, 8)], 3: [(2, 2, 2), (4, 1, 2), (1, 2, 4), (2, 4, 1)]},
                WARP_THREADS: {2: [(8, 4), (4, 8), (32, 1), (1, 32)], 3: [(4, 4, 2), (2, 4, 4), (8, 1, 4), (1, 2, 16)]}}
GRID_SHAPES = {2: [(10, 8), (16, 5), (5, 16), (1, 80)], 3: [(5, 4, 4), (4, 2, 10), (2, 8, 5), (1, 1, 80)]}
DIMENSION_SHARES = {2: 0.2, 3: 0.1}
# The share of plain barriers that are `cuda.syncwarp(mask)`: a block is
# one warp, so that it orders shared memory as `syncthreads` does, but
# makes the CPU engine run the block's threads as fibers.
SYNCWARP_SHARE = 0.2
INPUTS = [
    ("a_i8", "int8"),
    ("a_u16", "uint16"),
    ("a_i32", "int32"),
    ("a_i64", "int64"),
    ("a_u64", "uint64"),
    ("a_f32", "float32"),
    ("a_f64", "float64"),
]
INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_TYPES = ["float32", "float64"]
# Every kernel's signature: the inputs, then out_i, out_f, s_i and s_f.
KERNEL_SIGNATURE = f"void({', '.join(f'{dtype}[:]' for _, dtype in INPUTS)}, int64[:], float64[:], int64[:], float64[:])"

# --- Expressions -------------------------------------------------------------
# An expression is a small node; `kind` is "int", "float" or "bool" (what
# operations may apply to it), not Numba's exact type.


@dataclasses.dataclass
class Expr:
    kind: str

    def children(self):
        return []

    def render(self, host):
        raise NotImplementedError


@dataclasses.dataclass
class Lit(Expr):
    text: str

    def render(self, host):
        return self.text


@dataclasses.dataclass
class Name(Expr):
    name: str

    def render(self, host):
        return self.name


@dataclasses.dataclass
class Cast(Expr):
    dtype: str
    operand: Expr

    def children(self):
        return [self.operand]

    def render(self, host):
        return f"np.{self.dtype}({self.operand.render(host)})"


@dataclasses.dataclass
class Load(Expr):
    array: str
    index: Expr
    length: int = ARRAY_LENGTH

    def children(self):
        return [self.index]

    def render(self, host):
        return f"{self.array}[({self.index.render(host)}) % {self.length}]"


@dataclasses.dataclass
class SharedLoad(Expr):
    """A slot of buffer `buffer` of a shared array: the thread's own (at its
    index in the block, `tx`), or with `lane` that of the block's thread
    `lane % threads`, with `threads` in a block. The lane is no child: a
    reduced program must keep reading only what no other thread writes."""

    array: str
    buffer: int
    lane: Expr = None
    threads: int = THREADS

    def render(self, host):
        lane = "tx" if self.lane is None else f"({self.lane.render(host)}) % {self.threads}"
        return f"{self.array}[{self.buffer * self.threads} + {lane}]"


@dataclasses.dataclass
class Binary(Expr):
    op: str
    left: Expr
    right: Expr

    def children(self):
        return [self.left, self.right]

    def render(self, host):
        left, right = self.left.render(host), self.right.render(host)
        if self.op in ("//", "%", "/"):
            fallback = "3.0" if self.right.kind == "float" else "3"
            right = f"({right} if {right} != 0 else {fallback})"
        elif self.op in ("<<", ">>"):
            right = f"(({right}) & 31)"
        return f"({left} {self.op} {right})"


@dataclasses.dataclass
class Unary(Expr):
    op: str
    operand: Expr

    def children(self):
        return [self.operand]

    def render(self, host):
        return f"({self.op}{self.operand.render(host)})"


@dataclasses.dataclass
class Compare(Expr):
    ops: list
    operands: list

    def children(self):
        return list(self.operands)

    def render(self, host):
        text = self.operands[0].render(host)
        for op, operand in zip(self.ops, self.operands[1:]):
            text += f" {op} {operand.render(host)}"
        return f"({text})"


@dataclasses.dataclass
class BoolOp(Expr):
    op: str
    operands: list

    def children(self):
        return list(self.operands)

    def render(self, host):
        return "(" + f" {self.op} ".join(o.render(host) for o in self.operands) + ")"


@dataclasses.dataclass
class IfExp(Expr):
    test: Expr
    body: Expr
    orelse: Expr

    def children(self):
        return [self.test, self.body, self.orelse]

    def render(self, host):
        return f"({self.body.render(host)} if {self.test.render(host)} else {self.orelse.render(host)})"


@dataclasses.dataclass
class Call(Expr):
    function: str
    arguments: list
    # The arguments from this one on are passed as one unpacked tuple:
    # `f(a, *(b, c,))`.
    unpacked_from: int = None

    def children(self):
        return list(self.arguments)

    def render(self, host):
        rendered = [a.render(host) for a in self.arguments]
        if self.unpacked_from is not None:
            rest = rendered[self.unpacked_from:]
            rendered = rendered[:self.unpacked_from] + ["*(" + "".join(f"{a}, " for a in rest) + ")"]
        # njit's min and max of floats are Python's; the CUDA target's are
        # oracles.HOST_HEADER's cuda_min and cuda_max.
        function = f"cuda_{self.function}" if host and self.function in ("min", "max") else self.function
        return f"{function}(" + ", ".join(rendered) + ")"


@dataclasses.dataclass
class TupleGet(Expr):
    """`(e0, e1, ...)[index]`, or, with `dynamic`, the tuple (of one type)
    indexed by that expression at run time."""

    elements: list
    index: int
    dynamic: Expr = None

    def children(self):
        return list(self.elements) + ([self.dynamic] if self.dynamic else [])

    def render(self, host):
        index = self.dynamic.render(host) if self.dynamic else self.index
        return "(" + ", ".join(e.render(host) for e in self.elements) + f",)[{index}]"


# --- Statements --------------------------------------------------------------


@dataclasses.dataclass
class Stmt:
    def bodies(self):
        """The statement lists nested in this statement."""
        return []

    def exprs(self):
        return []

    def render(self, host, indent):
        raise NotImplementedError


@dataclasses.dataclass
class Assign(Stmt):
    target: str
    value: Expr
    augmented: str = ""

    def exprs(self):
        return [self.value]

    def render(self, host, indent):
        return [f"{indent}{self.target} {self.augmented}= {self.value.render(host)}"]


@dataclasses.dataclass
class Unpack(Stmt):
    targets: list
    values: list

    def exprs(self):
        return list(self.values)

    def render(self, host, indent):
        values = ", ".join(v.render(host) for v in self.values)
        return [f"{indent}{', '.join(self.targets)} = ({values},)"]


@dataclasses.dataclass
class Store(Stmt):
    array: str
    index: Expr
    value: Expr
    length: int = ARRAY_LENGTH

    def exprs(self):
        return [self.index, self.value]

    def render(self, host, indent):
        return [f"{indent}{self.array}[({self.index.render(host)}) % {self.length}] = {self.value.render(host)}"]


@dataclasses.dataclass
class AtomicUpdate(Stmt):
    """`cuda.atomic.<op>(array, slot, value)` on the slot of `op` among the
    ATOMIC_OPS slots of `array` from `base` on: those after the scratch of
    s_i, which any thread of the grid updates, concurrently where the CPU
    engine's workers run blocks at once, or those of the block's
    SHARED_ATOMICS. On the host the thread applies the operation in place:
    run_threads() runs one thread after another, and the order is no part
    of the result. The value is an exact int64 (Numba would convert any
    other to the array's int64 as this does)."""

    op: str
    value: Expr
    base: int
    array: str = "s_i"

    def exprs(self):
        return [self.value]

    def render(self, host, indent):
        slot = self.base + ATOMIC_OPS.index(self.op)
        value = self.value.render(host)
        if not host:
            return [f"{indent}cuda.atomic.{self.op}({self.array}, {slot}, {value})"]
        update = ATOMIC_UPDATES[self.op].format(old=f"{self.array}[{slot}]", value=f"np.int64({value})")
        return [f"{indent}{self.array}[{slot}] = {update}"]


@dataclasses.dataclass
class SharedAtomicsInit(Stmt):
    """The first value of each slot of SHARED_ATOMICS, from the thread of
    the block with the slot's index, at the top of the first phase."""

    value: Expr

    def exprs(self):
        return [self.value]

    def render(self, host, indent):
        return [f"{indent}if tx < {len(ATOMIC_OPS)}:",
                f"{indent}    {SHARED_ATOMICS}[tx] = {self.value.render(host)}"]


@dataclasses.dataclass
class SharedAtomicsLoad(Expr):
    """A slot of SHARED_ATOMICS, in a phase that no atomic updates it in."""

    slot: int

    def render(self, host):
        return f"{SHARED_ATOMICS}[{self.slot}]"


@dataclasses.dataclass
class SharedStore(Stmt):
    """A store to the thread's own slot of buffer `buffer` of a shared
    array."""

    array: str
    buffer: int
    value: Expr
    threads: int = THREADS

    def exprs(self):
        return [self.value]

    def render(self, host, indent):
        return [f"{indent}{self.array}[{self.buffer * self.threads} + tx] = {self.value.render(host)}"]


@dataclasses.dataclass
class Barrier(Stmt):
    """`cuda.syncthreads()` (with `warp`, `cuda.syncwarp(mask)` of the
    block's one warp), or with `reduction` ("count", "and", "or")
    `target = np.int64(cuda.syncthreads_<reduction>(predicate))`. Numba
    takes an integer predicate and converts it to int32 (a truncation), so
    that 2**32 is false. On the host the generator yields whether the
    truncated predicate is non-zero and reads the block's result from
    `sync`, which run_threads() fills before it resumes any thread."""

    reduction: str = None
    target: str = None
    predicate: Expr = None
    warp: bool = False
    threads: int = THREADS

    def exprs(self):
        return [self.predicate] if self.predicate is not None else []

    def render(self, host, indent):
        if self.reduction is None:
            call = f"cuda.syncwarp({warp_mask(self.threads)})" if self.warp else "cuda.syncthreads()"
            return [f"{indent}yield 0" if host else f"{indent}{call}"]
        predicate = self.predicate.render(host)
        if not host:
            return [f"{indent}{self.target} = np.int64(cuda.syncthreads_{self.reduction}({predicate}))"]
        return yield_predicate(indent, f"np.int32({predicate}) != 0", self.target, self.reduction)


@dataclasses.dataclass
class WarpExchange(Stmt):
    """A warp collective of the block's `threads` threads, one warp, partial
    or whole (every lane a shuffle reads is active): `target =
    cuda.shfl_sync(mask, value, lane % threads)` ("shfl"),
    `shfl_up_sync(mask, value, delta)` ("up"), in a whole warp
    `shfl_down_sync(mask, value, delta)` ("down"; past either end of the
    warp a lane keeps its own value), `shfl_xor_sync(mask, value, delta)`
    ("xor", delta < threads), or
    `target = np.int64(cuda.ballot_sync(mask, value))` ("ballot", value a
    predicate). On the host the thread puts its value into `xch_i`/`xch_f`
    (a ballot yields its predicate), yields, and reads from `got_i`/`got_f`
    (or `sync`), which run_threads() fills once every thread has arrived."""

    op: str
    target: str
    kind: str  # of the value: "int", "float", or "bool" for a ballot
    value: Expr
    lane: Expr = None
    delta: int = 0
    threads: int = THREADS

    def exprs(self):
        return [self.value]

    def render(self, host, indent):
        value = self.value.render(host)
        mask = warp_mask(self.threads)
        if not host:
            if self.op == "ballot":
                call = f"np.int64(cuda.ballot_sync({mask}, {value}))"
            elif self.op == "shfl":
                call = f"cuda.shfl_sync({mask}, {value}, ({self.lane.render(host)}) % {self.threads})"
            else:
                call = f"cuda.shfl_{self.op}_sync({mask}, {value}, {self.delta})"
            return [f"{indent}{self.target} = {call}"]
        if self.op == "ballot":
            return yield_predicate(indent, f"({value})", self.target, "ballot")
        suffix = "f" if self.kind == "float" else "i"
        lines = []
        if self.op == "shfl":
            lines.append(f"{indent}src = ({self.lane.render(host)}) % {self.threads}")
        lines += [f"{indent}xch_{suffix}[tx] = {value}", f"{indent}yield 0"]
        source = {"shfl": "src", "xor": f"tx ^ {self.delta}",
                  "up": f"tx - {self.delta} if tx >= {self.delta} else tx",
                  "down": f"tx + {self.delta} if tx + {self.delta} < {self.threads} else tx"}[self.op]
        return lines + [f"{indent}{self.target} = got_{suffix}[{source}]"]


@dataclasses.dataclass
class If(Stmt):
    test: Expr
    body: list
    orelse: list

    def bodies(self):
        return [self.body, self.orelse]

    def exprs(self):
        return [self.test]

    def render(self, host, indent):
        lines = [f"{indent}if {self.test.render(host)}:"] + render_body(self.body, host, indent + "    ")
        if self.orelse:
            lines += [f"{indent}else:"] + render_body(self.orelse, host, indent + "    ")
        return lines


@dataclasses.dataclass
class For(Stmt):
    variable: str
    bounds: list
    body: list
    orelse: list

    def bodies(self):
        return [self.body, self.orelse]

    def exprs(self):
        return list(self.bounds)

    def render(self, host, indent):
        bounds = ", ".join(b.render(host) for b in self.bounds)
        lines = [f"{indent}for {self.variable} in range({bounds}):"]
        lines += render_body(self.body, host, indent + "    ")
        if self.orelse:
            lines += [f"{indent}else:"] + render_body(self.orelse, host, indent + "    ")
        return lines


@dataclasses.dataclass
class ForTuple(Stmt):
    """`for variable in (e0, e1, ...):` over a tuple of one type, made
    before the loop and read at a run-time index on each iteration."""

    variable: str
    elements: list
    body: list

    def bodies(self):
        return [self.body]

    def exprs(self):
        return list(self.elements)

    def render(self, host, indent):
        items = ", ".join(e.render(host) for e in self.elements)
        return [f"{indent}for {self.variable} in ({items},):"] + render_body(self.body, host, indent + "    ")


@dataclasses.dataclass
class While(Stmt):
    """`while counter < limit and test:`, or `while True:` when test is None
    and forever is set; the counter is incremented first in the body."""

    counter: str
    limit: int
    test: Expr
    forever: bool
    body: list
    orelse: list

    def bodies(self):
        return [self.body, self.orelse]

    def exprs(self):
        return [self.test] if self.test is not None else []

    def render(self, host, indent):
        inner = indent + "    "
        lines = [f"{indent}{self.counter} = 0"]
        if self.forever:
            lines += [f"{indent}while True:", f"{inner}{self.counter} += 1",
                      f"{inner}if {self.counter} > {self.limit}:", f"{inner}    break"]
        else:
            test = f" and {self.test.render(host)}" if self.test is not None else ""
            lines += [f"{indent}while {self.counter} < {self.limit}{test}:", f"{inner}{self.counter} += 1"]
        lines += render_body(self.body, host, inner, allow_empty=True)
        if self.orelse:
            lines += [f"{indent}else:"] + render_body(self.orelse, host, inner)
        return lines


@dataclasses.dataclass
class Jump(Stmt):
    keyword: str  # "break" or "continue"

    def render(self, host, indent):
        return [f"{indent}{self.keyword}"]


@dataclasses.dataclass
class Return(Stmt):
    value: Expr = None

    def exprs(self):
        return [self.value] if self.value is not None else []

    def render(self, host, indent):
        return [f"{indent}return" + (f" {self.value.render(host)}" if self.value is not None else "")]


@dataclasses.dataclass
class LocalArray(Stmt):
    """A local array of `length` elements, filled from an input array."""

    name: str
    dtype: str
    length: int
    source: str

    def render(self, host, indent):
        make = f"np.zeros({self.length}, np.{self.dtype})" if host else \
            f"cuda.local.array({self.length}, np.{self.dtype})"
        return [f"{indent}{self.name} = {make}",
                f"{indent}for fill in range({self.length}):",
                f"{indent}    {self.name}[fill] = {self.source}[(fill * 5 + t) % {ARRAY_LENGTH}]"]


@dataclasses.dataclass
class InsertionSort(Stmt):
    """The shape of sort people write over a local array: a `while` whose
    condition short-circuits before it indexes."""

    name: str
    length: int

    def render(self, host, indent):
        i = indent
        return [f"{i}for k in range(1, {self.length}):",
                f"{i}    key = {self.name}[k]",
                f"{i}    j = k - 1",
                f"{i}    while j >= 0 and {self.name}[j] > key:",
                f"{i}        {self.name}[j + 1] = {self.name}[j]",
                f"{i}        j -= 1",
                f"{i}    {self.name}[j + 1] = key"]


def render_body(body, host, indent, allow_empty=False):
    lines = [line for stmt in body for line in stmt.render(host, indent)]
    return lines or ([] if allow_empty else [f"{indent}pass"])


# --- Programs ----------------------------------------------------------------


@dataclasses.dataclass
class Function:
    name: str
    parameters: list  # (name, kind)
    body: list
    result_kind: str  # device functions: "int" or "float"; kernels: None
    # Defined inside the kernel, after its variables and local arrays,
    # which it reads (never assigns) along with the inputs and `t`.
    nested: bool = False
    # A nested function written as `name = lambda ...: <its return value>`.
    is_lambda: bool = False
    # Returns None on some paths: callers read it through OR_DEFAULT.
    optional: bool = False

    def render(self, host, indent):
        """A device function's definition; a nested one is undecorated, as
        Numba compiles a function defined inside another."""
        params = ", ".join(p for p, _ in self.parameters)
        if self.is_lambda:
            [returned] = self.body
            return [f"{indent}{self.name} = lambda {params}: {returned.value.render(host)}"]
        decorator = [] if self.nested else [indent + ("@njit" if host else "@cuda.jit(device=True)")]
        return [*decorator, f"{indent}def {self.name}({params}):",
                *render_body(self.body, host, indent + "    ")]


@dataclasses.dataclass
class Program:
    seed: int
    variables: list  # (name, kind, initial Expr) bound first by every thread
    kernel: Function
    devices: list
    local_arrays: list  # LocalArray statements bound after the variables
    synchronizes: bool = False  # barriers and shared arrays (see the module's docstring)
    blocks: int = 1  # the grid: blocks of `threads`; `t` is the index in the grid
    # The launch of a 2-D or 3-D program: (grid shape, block shape), whose
    # products are `blocks` and `threads`; None for a 1-D launch.
    shape: tuple = None
    threads: int = THREADS  # in a block: THREADS or WARP_THREADS

    def launch(self):
        """The launch configuration, as `kernel[grid, block]` takes it."""
        return self.shape if self.shape else (self.blocks, self.threads)

    # What the harness (oracles.py) asks of every generator's programs.

    signature = KERNEL_SIGNATURE

    @property
    def simulator_judges(self):
        """Numba's simulator runs a block's threads as Python threads,
        block after block: too slow for a grid of many blocks, which njit
        judges alone."""
        return self.blocks == 1

    def arguments(self):
        """(the kernel's arguments, the arrays it writes by name): the
        inputs of the seed, then out_i, out_f, s_i and s_f at the
        sentinel."""
        outputs = output_arrays(self)
        return list(inputs(self.seed).values()) + list(outputs.values()), outputs

    def run_host(self, function, arguments):
        run_threads(function, self.threads, arguments, self.blocks)

    def coverage(self):
        """This generator's programs are not counted by launch index cells
        (launch_programs.py's are)."""
        return set()

    def output_slots(self):
        ints = [n for n, kind, _ in self.variables if kind != "float"]
        floats = [n for n, kind, _ in self.variables if kind == "float"]
        return ints, floats

    def render(self, name, host=False):
        """The kernel and its device functions as Python source, named
        `name` (and `name_dN`): a CUDA kernel, or with `host` njit
        functions whose kernel takes the thread index `t` first."""
        lines = []
        if any(device.optional for device in self.devices):
            lines += OR_DEFAULT.format(decorator="@njit" if host else "@cuda.jit(device=True)").splitlines()
            lines.append("")
        for device in self.devices:
            if not device.nested:
                lines += device.render(host, "") + [""]
        ints, floats = self.output_slots()
        arrays = ", ".join(n for n, _ in INPUTS)
        outputs = "out_i, out_f, s_i, s_f"
        if host:
            shared = ", " + ", ".join([*SHARED_ARRAYS, SHARED_ATOMICS, "sync", *EXCHANGE_ARRAYS]) \
                if self.synchronizes else ""
            lines.append("@njit")
            lines.append(f"def {name}(t, {arrays}, {outputs}{shared}):")
            if self.synchronizes:
                lines.append(f"    tx = t % {self.threads}")
        else:
            lines.append(kernel_decorator())
            lines.append(f"def {name}({arrays}, {outputs}):")
            if self.shape:
                lines += linear_thread_index(len(self.shape[1]), self.threads)
            else:
                lines.append("    t = cuda.grid(1)")
                if self.synchronizes:
                    lines.append("    tx = cuda.threadIdx.x")
            if self.synchronizes:
                lines += [f"    {array} = cuda.shared.array({shared_length(self.threads)}, np.{dtype})"
                          for array, dtype in SHARED_ARRAYS.items()]
                lines.append(f"    {SHARED_ATOMICS} = cuda.shared.array({len(ATOMIC_OPS)}, np.int64)")
        for variable, _, initial in self.variables:
            lines.append(f"    {variable} = {initial.render(host)}")
        for array in self.local_arrays:
            lines += array.render(host, "    ")
        for device in self.devices:
            if device.nested:
                lines += device.render(host, "    ")
        lines += render_body(self.kernel.body, host, "    ", allow_empty=True)
        lines += store_outputs(ints, floats, "    ")
        text = "\n".join(lines) + "\n"
        # Device functions are named after their kernel, so that the
        # programs of a batch share one module.
        for device in self.devices:
            text = re.sub(rf"\b{device.name}(\(| = lambda)", rf"{name}_{device.name}\1", text)
        return re.sub(r"\bor_default\(", f"{name}_or_default(", text)


def inputs(seed):
    """The input arrays of a program: values of every magnitude, signs and
    the ends of each type's range."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, dtype in INPUTS:
        info = np.iinfo(dtype) if dtype.startswith(("int", "uint")) else None
        if info is not None:
            small = rng.integers(max(info.min, -20), min(info.max, 20), ARRAY_LENGTH, endpoint=True)
            large = rng.integers(info.min, info.max, ARRAY_LENGTH, endpoint=True, dtype=dtype)
            values = np.where(rng.random(ARRAY_LENGTH) < 0.6, small.astype(dtype), large)
            values[0], values[1] = info.min, info.max
        else:
            values = (rng.standard_normal(ARRAY_LENGTH) * 10.0 ** rng.integers(-3, 6, ARRAY_LENGTH))
            values[0], values[1] = 0.0, -0.0
        arrays[name] = np.asarray(values, dtype=dtype)
    return arrays


# Output arrays start as this bit pattern, so that the reference shows
# whether a program stores anything at all (a kernel may return before it
# does; then its PTX rightly has no store).
SENTINEL = 0x5A5A5A5A5A5A5A5A


def output_arrays(program):
    ints, floats = program.output_slots()
    threads = program.threads * program.blocks
    sizes = {"out_i": threads * max(len(ints), 1), "out_f": threads * max(len(floats), 1),
             "s_i": scratch_array_length(program.blocks, program.threads),
             "s_f": scratch_array_length(program.blocks, program.threads)}
    return {name: np.full(size, SENTINEL, np.int64).view(np.float64 if name.endswith("f") else np.int64)
            for name, size in sizes.items()}


def kernel_decorator():
    return f'@cuda.jit("{KERNEL_SIGNATURE}")'


def linear_thread_index(dimensions, threads):
    """The lines of a 2-D or 3-D kernel that number its thread `tx` in its
    block and `t` in the grid as a 1-D launch would: block and thread
    indices come from `cuda.grid` and from `threadIdx`, so that both are
    tested."""
    axes = "xyz"[:dimensions]
    at = [f"at_{axis}" for axis in axes]
    lines = [f"    {', '.join(at)} = cuda.grid({dimensions})"]
    thread = f"cuda.threadIdx.{axes[-1]}"
    block = f"{at[-1]} // cuda.blockDim.{axes[-1]}"
    for axis, position in zip(reversed(axes[:-1]), reversed(at[:-1])):
        thread = f"cuda.threadIdx.{axis} + cuda.blockDim.{axis} * ({thread})"
        block = f"{position} // cuda.blockDim.{axis} + cuda.gridDim.{axis} * ({block})"
    lines.append(f"    tx = {thread}")
    lines.append(f"    t = np.int64(({block}) * {threads} + tx)")
    return lines


def scratch_length(blocks, threads):
    """The length of the scratch of s_i and s_f, which threads store to (two
    slots each), for a grid of `blocks` blocks of `threads`."""
    return 2 * threads * blocks


def scratch_array_length(blocks, threads):
    """The length of s_i and s_f: the scratch, then the slots of the
    atomics."""
    return scratch_length(blocks, threads) + len(ATOMIC_OPS)


def shared_length(threads):
    """The length of each shared array: two buffers of one slot per thread."""
    return 2 * threads


def warp_mask(threads):
    """The mask of a block's one warp: its `threads` lanes."""
    return hex((1 << threads) - 1)


def yield_predicate(indent, truth, target, result):
    """The host rendering of a collective that reduces a predicate: yield
    whether it holds, then read the block's `result` (of SYNC_RESULTS)
    into `target`, as an int64 of the int32 the CUDA call returns."""
    return [f"{indent}yield 1 if {truth} else 0",
            f"{indent}{target} = np.int64(np.int32(sync[{SYNC_RESULTS.index(result)}]))"]


def run_threads(kernel, thread_count, arguments, blocks=1):
    """Runs the host rendering of a kernel for the threads of `blocks`
    blocks of `thread_count`: one call each, or for a synchronizing kernel
    (an njit generator) block by block, each with shared arrays of its own,
    every thread to its next barrier, round after round, with the results
    of a reducing barrier in `sync` before any thread goes on."""
    if not inspect.isgeneratorfunction(kernel.py_func):
        for t in range(thread_count * blocks):
            kernel(t, *arguments)
        return
    for block in range(blocks):
        first = block * thread_count
        _run_block(kernel, range(first, first + thread_count), arguments)


def _run_block(kernel, thread_indices, arguments):
    shared = [np.zeros(shared_length(len(thread_indices)), dtype) for dtype in SHARED_ARRAYS.values()]
    shared.append(np.zeros(len(ATOMIC_OPS), np.int64))
    sync = np.zeros(len(SYNC_RESULTS), np.int64)
    exchange = {name: np.zeros(len(thread_indices), dtype) for name, dtype in EXCHANGE_ARRAYS.items()}
    threads = [kernel(t, *arguments, *shared, sync, *exchange.values()) for t in thread_indices]
    while threads:
        waiting, predicates = [], []
        for thread in threads:
            try:
                predicates.append(next(thread))
                waiting.append(thread)
            except StopIteration:
                pass
        if waiting and len(waiting) != len(threads):
            raise RuntimeError("threads of the block left at different barriers")
        results = {"count": sum(p != 0 for p in predicates), "and": all(predicates), "or": any(predicates),
                   "ballot": sum(1 << lane for lane, p in enumerate(predicates) if p)}
        sync[:] = [results[name] for name in SYNC_RESULTS]
        exchange["got_i"][:] = exchange["xch_i"]
        exchange["got_f"][:] = exchange["xch_f"]
        threads = waiting


def constant_truth(test):
    """True or False when CPython compiles the test `test` to one jump or
    none (its jumps fold constants through `not`, conditional expressions
    and `and`/`or`), else None."""
    if isinstance(test, Lit) and test.kind == "bool":
        return test.text == "True"
    if isinstance(test, Unary) and test.op == "not ":
        truth = constant_truth(test.operand)
        return None if truth is None else not truth
    if isinstance(test, IfExp):
        choice = constant_truth(test.test)
        return None if choice is None else constant_truth(test.body if choice else test.orelse)
    if isinstance(test, BoolOp):
        truths = [constant_truth(operand) for operand in test.operands]
        decisive = test.op == "or"  # the value that decides an `or` (True) or an `and` (False)
        if decisive in truths:
            return decisive
        return (not decisive) if all(truth is not None for truth in truths) else None
    return None


def store_outputs(ints, floats, indent):
    lines = [f"{indent}out_i[t * {len(ints) or 1} + {k}] = {v}" for k, v in enumerate(ints)]
    lines += [f"{indent}out_f[t * {len(floats) or 1} + {k}] = {v}" for k, v in enumerate(floats)]
    return lines


def walk_statements(body):
    for stmt in body:
        yield stmt
        for inner in stmt.bodies():
            yield from walk_statements(inner)


# --- The generator -----------------------------------------------------------


def launch_shape(chooser, blocks, threads):
    """A 2-D or 3-D launch of `blocks` blocks of `threads`, or None for a
    1-D one."""
    draw, total = chooser.random(), 0.0
    for dimensions, share in DIMENSION_SHARES.items():
        total += share
        if draw < total:
            # One block: a grid of (1, 1) or (1, 1, 1).
            grids = [g for g in GRID_SHAPES[dimensions] if np.prod(g) == blocks] or [(1,) * dimensions]
            return chooser.choice(grids), chooser.choice(BLOCK_SHAPES[threads][dimensions])
    return None


class Generator:
    """Builds one random program from a seed; the same seed gives the same
    program on every machine."""

    def __init__(self, seed):
        self.seed = seed
        self.random = random.Random(seed)
        # A stream of its own too: the grid changes no program's text.
        self.blocks = MANY_BLOCKS if random.Random(f"blocks {seed}").random() < MANY_BLOCKS_SHARE else 1
        self.threads = WARP_THREADS if random.Random(f"threads {seed}").random() < WARP_THREADS_SHARE else THREADS
        self.shape = launch_shape(random.Random(f"shape {seed}"), self.blocks, self.threads)
        # Which plain barriers are warp barriers: a stream of its own too.
        self.barrier_kinds = random.Random(f"barrier kinds {seed}")
        self.atomics = random.Random(f"atomics {seed}")
        # Which shifts of a whole warp go down rather than up.
        self.warp_ops = random.Random(f"warp ops {seed}")
        self.counters = 0
        self.variables = []
        self.local_arrays = []
        self.devices = []
        # Device functions see only their parameters: no thread index, no
        # arrays; one nested in the kernel also reads the kernel's
        # variables (`captured`), arrays and thread index.
        self.in_device = False
        self.nested = False
        self.captured = []
        # In a synchronizing program's phase: (the buffer it writes, the
        # buffer it reads or None); no shared array is touched outside one.
        self.phase = None
        # No thread may return before a barrier the others wait at.
        self.returns_allowed = True

    def program(self):
        r = self.random
        self.variables = []
        for i in range(r.randint(3, 6)):
            kind = r.choice(["int", "int", "float", "bool"])
            self.variables.append((f"v{i}", kind, self.initial(kind)))
        self.local_arrays = []
        if r.random() < 0.4:
            dtype = r.choice(["int32", "int64", "float64"])
            source = {"int32": "a_i32", "int64": "a_i64", "float64": "a_f64"}[dtype]
            self.local_arrays.append(LocalArray("loc", dtype, r.randint(3, 8), source))
        self.devices = []
        for d in range(r.randint(0, 2)):
            self.devices.append(self.device_function(f"d{d}"))
        # Decided by a stream of its own, so that the programs that do not
        # synchronize are what the same seeds gave before barriers existed.
        synchronizes = random.Random(f"synchronizes {self.seed}").random() < SYNCHRONIZING_SHARE
        # A function defined inside the kernel, from a stream of its own
        # too; not in a synchronizing kernel, whose njit rendering is a
        # generator (Numba inlines no closure into one).
        nested = random.Random(f"nested {self.seed}")
        if not synchronizes and nested.random() < NESTED_FUNCTION_SHARE:
            main, self.random = self.random, nested
            as_lambda = random.Random(f"lambda {self.seed}").random() < LAMBDA_SHARE
            self.devices.append(self.device_function(f"d{len(self.devices)}", nested=True,
                                                     as_lambda=as_lambda))
            self.random = main
        if synchronizes:
            body = self.phases()
        else:
            body = self.body(depth=0, loops=0, in_device=False, size=r.randint(3, 8))
        if self.local_arrays and r.random() < 0.5:
            body.insert(r.randint(0, len(body)), InsertionSort("loc", self.local_arrays[0].length))
        # Numba compiles a nested function no call inlines as one that may
        # escape, which must capture constants only: keep it only if called,
        # and call it first thing, as CPython compiles away a call it finds
        # dead (after a break, under `if False:`), which then inlines none.
        self.devices = [d for d in self.devices if not d.nested or _calls(body, d.name)]
        for device in self.devices:
            if device.nested:
                targets = [n for n, k, _ in self.variables if k == device.result_kind]
                arguments = [self.exact(k, 1) for _, k in device.parameters]
                target = r.choice(targets) if targets else f"first_{device.name}"
                body.insert(0, Assign(target, Call(device.result_kind, device.name, arguments)))
        kernel = Function("kernel", [], body, None)
        return Program(self.seed, self.variables, kernel, self.devices, self.local_arrays, synchronizes,
                       self.blocks, self.shape, self.threads)

    def phases(self):
        """A synchronizing kernel's body: the first phase fills every
        thread's shared slots, then phases alternate the buffer they write,
        some in a loop of a trip count all threads share; only the last may
        return."""
        r = self.random
        body = []
        for array, dtype in SHARED_ARRAYS.items():
            body += [SharedStore(array, buffer, self.exact(numba_types.kind(dtype), 2), self.threads)
                     for buffer in (0, 1)]
        body.append(SharedAtomicsInit(self.from_atomics_stream(lambda: self.exact("int", 2))))
        self.returns_allowed = False
        body += self.phase_body(write=0, read=None) + [self.barrier()]
        write = 1
        for segment in range(r.randint(1, 3)):
            if r.random() < 0.4:
                inner = self.phase_body(write, 1 - write) + [self.barrier()]
                inner += self.phase_body(1 - write, write) + [self.barrier()]
                body.append(For(f"r{segment}", [Lit("int", str(r.randint(1, 3)))], inner, []))
            else:
                body += self.phase_body(write, 1 - write) + [self.barrier()]
                write = 1 - write
        self.returns_allowed = True
        body += self.phase_body(write, 1 - write)
        self.phase = None
        return body

    def phase_body(self, write, read):
        self.phase = (write, read)
        body = self.body(depth=0, loops=0, in_device=False, size=self.random.randint(1, 4))
        # Warp collectives where every thread gets to: the phase's top level,
        # before the last phase (whose threads may have returned).
        if not self.returns_allowed:
            for _ in range(self.random.choice([0, 0, 1, 2])):
                exchange = self.warp_exchange()
                if exchange is not None:
                    body.insert(self.random.randint(0, len(body)), exchange)
        return body

    def warp_exchange(self):
        r = self.random
        op = r.choice(["shfl", "up", "xor", "ballot"])
        if op == "up" and self.threads == WARP_THREADS and self.warp_ops.random() < 0.5:
            op = "down"
        if op == "ballot":
            counters = [n for n, k, _ in self.variables if k == "int"]
            return (WarpExchange(op, r.choice(counters), "bool", self.expr("bool", 2), threads=self.threads)
                    if counters else None)
        numbers = [(n, k) for n, k, _ in self.variables if k != "bool"]
        if not numbers:
            return None
        target, kind = r.choice(numbers)
        lane = self.exact("int", 1) if op == "shfl" else None
        return WarpExchange(op, target, kind, self.exact(kind, 2), lane, r.randint(1, self.threads - 1),
                            self.threads)

    def barrier(self):
        """The barrier that ends the current phase: a plain one, or one that
        also reduces a predicate of the phase into an integer variable."""
        r = self.random
        counters = [n for n, k, _ in self.variables if k == "int"]
        if counters and r.random() < 0.3:
            return Barrier(r.choice(["count", "and", "or"]), r.choice(counters), self.expr("int", 2),
                           threads=self.threads)
        return Barrier(warp=self.barrier_kinds.random() < SYNCWARP_SHARE, threads=self.threads)

    def initial(self, kind):
        r = self.random
        if kind == "int":
            return Cast("int", "int64", Cast("int", r.choice(INT_TYPES), self.load("int")))
        if kind == "float":
            return Cast("float", "float64", Cast("float", r.choice(FLOAT_TYPES), self.load("float")))
        return Compare("bool", ["<"], [self.load("int"), Lit("int", str(r.randint(-50, 50)))])

    def device_function(self, name, nested=False, as_lambda=False):
        r = self.random
        parameters = [(f"p{i}", r.choice(["int", "float"])) for i in range(r.randint(1, 3))]
        result = r.choice(["int", "float"])
        saved = self.variables, self.local_arrays
        if nested:
            self.captured = [(n, kind) for n, kind, _ in self.variables] + [("t", "int")]
        else:
            self.local_arrays = []
        self.variables = [(p, kind, None) for p, kind in parameters]
        self.result_kind = result
        self.in_device, self.nested = True, nested
        body = [] if as_lambda else self.body(depth=0, loops=0, in_device=True, size=r.randint(2, 5))
        body.append(Return(self.exact(result, 2)))
        # From a stream of its own, so that the other programs are what the
        # same seeds gave before optional results.
        early = random.Random(f"optional {self.seed} {name}")
        optional = not nested and early.random() < OPTIONAL_RESULT_SHARE
        if optional:
            main, self.random = self.random, early
            body_variables, self.variables = self.variables, [(p, kind, None) for p, kind in parameters]
            test = self.expr("bool", 2)
            self.variables, self.random = body_variables, main
            body.insert(early.randint(0, len(body) - 1), If(test, [Return()], []))
        self.in_device, self.nested, self.captured = False, False, []
        self.variables, self.local_arrays = saved
        return Function(name, parameters, body, result, nested, as_lambda, optional)

    # Statements.

    def body(self, depth, loops, in_device, size):
        return [self.statement(depth, loops, in_device) for _ in range(size)]

    def statement(self, depth, loops, in_device):
        if not in_device and self.atomics.random() < ATOMIC_SHARE:
            return self.atomic_update()
        r = self.random
        choices = ["assign", "assign", "augment", "store"]
        if depth < 3:
            choices += ["if", "for", "while", "while_true"]
            # Not where warp exchanges (yields, on the host) may go: Numba
            # cannot keep a tuple's iterator in a generator's state.
            if self.returns_allowed:
                choices.append("for_tuple")
        if loops:
            choices += ["break", "continue"]
        if r.random() < 0.08 and self.returns_allowed:
            choices.append("return")
        if self.phase is not None and not in_device:
            choices += ["shared_store", "shared_store"]
        if self.local_arrays and not in_device:
            choices.append("local_store")
        if not in_device:
            choices.append("unpack")
        choice = r.choice(choices)
        inner = lambda n: self.body(depth + 1, loops, in_device, n)  # noqa: E731
        in_loop = lambda n: self.body(depth + 1, loops + 1, in_device, n)  # noqa: E731
        if choice == "assign":
            name, kind, _ = r.choice(self.variables)
            return Assign(name, self.exact(kind, 3))
        if choice == "augment":
            name, kind, _ = r.choice([v for v in self.variables if v[1] != "bool"] or self.variables)
            if kind == "bool":
                return Assign(name, self.expr("bool", 2))
            op = r.choice(["+", "-", "*"] + (["&", "|", "^"] if kind == "int" else []))
            if kind == "int" and op in ("+", "-", "*"):
                # `v += e` could overflow int64; see arithmetic().
                return Assign(name, self.arithmetic(op, Name("int", name), self.exact("int", 2)))
            return Assign(name, self.exact(kind, 2), op)
        if choice == "store":
            return Assign(*self.any_assignment()) if in_device else self.scratch_store()
        if choice == "shared_store":
            array = r.choice(list(SHARED_ARRAYS))
            return SharedStore(array, self.phase[0], self.expr(numba_types.kind(SHARED_ARRAYS[array]), 2),
                               self.threads)
        if choice == "local_store":
            array = self.local_arrays[0]
            kind = "float" if array.dtype.startswith("float") else "int"
            return Store(array.name, self.exact("int", 2), self.expr(kind, 2), array.length)
        if choice == "unpack":
            names = r.sample(self.variables, min(2, len(self.variables)))
            return Unpack([n for n, _, _ in names], [self.exact(k, 2) for _, k, _ in names])
        if choice == "if":
            orelse = inner(r.randint(0, 3)) if r.random() < 0.6 else []
            return If(self.expr("bool", 2), inner(r.randint(1, 3)), orelse)
        if choice == "for":
            variable = f"i{depth}"
            bounds = self.range_bounds()
            orelse = inner(r.randint(1, 2)) if r.random() < 0.25 else []
            loop = For(variable, bounds, in_loop(r.randint(1, 4)), orelse)
            counters = [n for n, k, _ in self.variables if k == "int"]
            if counters:
                loop.body.insert(0, Assign(r.choice(counters), Name("int", variable), "^"))
            return loop
        if choice == "for_tuple":
            kind = r.choice(["int", "float"])
            variable = f"item{depth}{kind[0]}"
            loop = ForTuple(variable, [self.exact(kind, 2) for _ in range(r.randint(2, 5))],
                            in_loop(r.randint(1, 3)))
            targets = [n for n, k, _ in self.variables if k == kind]
            if targets:
                loop.body.insert(0, Assign(r.choice(targets), Name(kind, variable), "^" if kind == "int" else "+"))
            return loop
        if choice in ("while", "while_true"):
            counter = f"c{self.counters}"
            self.counters += 1
            forever = choice == "while_true"
            test = None if forever or r.random() < 0.3 else self.expr("bool", 2)
            orelse = inner(r.randint(1, 2)) if not forever and r.random() < 0.25 else []
            return While(counter, r.randint(1, 6), test, forever, in_loop(r.randint(1, 4)), orelse)
        if choice in ("break", "continue"):
            jump = Jump(choice)
            return If(self.expr("bool", 1), [jump], []) if r.random() < 0.7 else jump
        if in_device:
            return Return(self.exact(self.result_kind, 2))
        return If(self.expr("bool", 1), [Return()], [])

    def from_atomics_stream(self, make):
        """What `make` builds, every draw of it from the atomics' own stream."""
        main, self.random = self.random, self.atomics
        try:
            return make()
        finally:
            self.random = main

    def updates_shared_atomics(self):
        return self.phase is not None and self.phase[0] == 1

    def reads_shared_atomics(self):
        return self.phase is not None and self.phase[0] == 0 and self.phase[1] is not None

    def atomic_update(self):
        def make():
            op, value = self.random.choice(ATOMIC_OPS), self.exact("int", 2)
            if self.updates_shared_atomics() and self.random.random() < 0.5:
                return AtomicUpdate(op, value, 0, SHARED_ATOMICS)
            return AtomicUpdate(op, value, scratch_length(self.blocks, self.threads))
        return self.from_atomics_stream(make)

    def scratch_store(self):
        """A store to one of the thread's own two slots of a scratch array
        (s_i or s_f), so that threads never race; the slot depends on the
        program's values, and the scratch arrays are outputs too."""
        r = self.random
        kind = r.choice(["int", "float"])
        slot = Binary("int", "%", self.exact("int", 1), Lit("int", "2"))
        index = Binary("int", "+", Binary("int", "*", Name("int", "t"), Lit("int", "2")), slot)
        return Store("s_i" if kind == "int" else "s_f", index, self.expr(kind, 2),
                     scratch_length(self.blocks, self.threads))

    def any_assignment(self):
        name, kind, _ = self.random.choice(self.variables)
        return name, self.exact(kind, 2)

    def range_bounds(self):
        r = self.random
        small = lambda: self.random.choice(  # noqa: E731
            [Lit("int", str(r.randint(-3, 6))), Binary("int", "&", self.exact("int", 1), Lit("int", "7"))])
        shape = r.choice([1, 2, 3])
        if shape == 1:
            return [small()]
        if shape == 2:
            return [small(), small()]
        return [small(), small(), Lit("int", str(r.choice([-3, -2, -1, 1, 2, 3])))]

    # Expressions.

    def leaf(self, kind):
        r = self.random
        names = [n for n, k, _ in self.variables if k == kind] + [n for n, k in self.captured if k == kind]
        pick = r.random()
        if kind == "int":
            if names and pick < 0.5:
                return Name("int", r.choice(names))
            if pick < 0.7:
                return self.load("int")
            if pick < 0.8 and not self.in_device:
                return Name("int", "t")
            return Lit("int", str(r.choice([0, 1, 2, 3, 7, -1, -5, 100, 255, 1 << 31, -(1 << 40)])))
        if kind == "float":
            if names and pick < 0.5:
                return Name("float", r.choice(names))
            if pick < 0.8:
                return self.load("float")
            return Lit("float", r.choice(["0.5", "-1.25", "3.0", "1e10", "-0.0"]))
        if names and pick < 0.6:
            return Name("bool", r.choice(names))
        return Lit("bool", r.choice(["True", "False"]))

    def load(self, kind):
        r = self.random
        if self.in_device and not self.nested:
            return Lit(kind, str(r.randint(-9, 9)) if kind == "int" else r.choice(["0.5", "-2.0"]))
        if kind == "int" and self.reads_shared_atomics() and \
                self.atomics.random() < SHARED_ATOMIC_LOAD_SHARE:
            return SharedAtomicsLoad("int", self.atomics.randrange(len(ATOMIC_OPS)))
        if self.phase is not None and r.random() < 0.35:
            return self.shared_load(kind)
        if kind == "int":
            array = r.choice(INPUTS[:5])[0]
        else:
            array = r.choice(INPUTS[5:])[0]
        if self.local_arrays and r.random() < 0.2:
            local = self.local_arrays[0]
            if (kind == "float") == local.dtype.startswith("float"):
                return Load(kind, local.name, self.index(), local.length)
        return Load(kind, array, self.index())

    def shared_load(self, kind):
        """A slot no other thread writes in this phase: the thread's own in
        either buffer, or any thread's in the buffer the phase reads."""
        r = self.random
        array = next(a for a, dtype in SHARED_ARRAYS.items() if numba_types.kind(dtype) == kind)
        write, read = self.phase
        if read is None or r.random() < 0.3:
            return SharedLoad(kind, array, r.choice([write, read]) if read is not None else write,
                              threads=self.threads)
        return SharedLoad(kind, array, read, self.index(), self.threads)

    def arithmetic(self, op, left, right):
        """`left op right` on integers, with no signed overflow: Numba marks
        signed +, - and * `nsw`, so an overflow there is undefined (LLVM
        may fold `1 >= x * -5` into `x <= 0`, whatever x * -5 wraps to).
        Where the result is signed, 64-bit operands are first narrowed to
        int32 (a defined truncation), which keeps every sum, difference and
        product in range; unsigned arithmetic wraps, as defined."""
        if op in ("+", "-", "*"):
            result = numba_types.result(op, self.type_of(left), self.type_of(right))
            if result is not None and result.startswith("int"):
                left, right = (Cast("int", "int32", x) if self.type_of(x) in ("int64", "uint64") else x
                               for x in (left, right))
        return Binary("int", op, left, right)

    def index(self):
        r = self.random
        if r.random() < 0.5:
            return Name("int", "t")
        names = [n for n, k, _ in self.variables if k == "int"]
        base = Name("int", r.choice(names)) if names else Name("int", "t")
        return self.arithmetic("+", base, Lit("int", str(r.randint(0, 9))))

    def expr(self, kind, depth):
        """An expression whose Numba type is of `kind`: what the shapes below
        build is typed with Numba's own rules, and whatever Numba would
        reject, or types otherwise, is converted or replaced by a leaf."""
        candidate = self._shape(kind, depth)
        ty = self.type_of(candidate)
        got = numba_types.kind(ty)
        if got == kind:
            return candidate
        if kind == "float" and got == "int":
            return Cast("float", "float64", candidate)
        return self.leaf(kind)

    def exact(self, kind, depth):
        """An expression of exactly int64, float64 or bool: what variables,
        parameters and results hold, so that their types never depend on
        how merges unify."""
        value = self.expr(kind, depth)
        wanted = {"int": "int64", "float": "float64", "bool": "bool"}[kind]
        return value if self.type_of(value) == wanted else Cast(kind, wanted, value)

    @property
    def types(self):
        exact = {"int": "int64", "float": "float64", "bool": "bool"}
        return {**{name: exact[kind] for name, kind in self.captured},
                **{name: exact[kind] for name, kind, _ in self.variables}}

    @property
    def array_types(self):
        arrays = dict(INPUTS)
        arrays.update({a.name: a.dtype for a in self.local_arrays})
        return arrays

    def type_of(self, e):
        """Numba's type of expression `e`, or None if Numba rejects it."""
        if isinstance(e, Lit):
            return {"int": "int64", "float": "float64", "bool": "bool"}[e.kind]
        if isinstance(e, Name):
            return self.types.get(e.name, "int64")
        if isinstance(e, Cast):
            source = self.type_of(e.operand)
            if source is None or (numba_types.kind(source) == "float" and not e.dtype.startswith("float")):
                return None  # float to integer: undefined out of range
            return e.dtype
        if isinstance(e, Load):
            index = self.type_of(e.index)
            if numba_types.kind(index) != "int" or numba_types.result("%", index, "int64") is None:
                return None
            if numba_types.kind(numba_types.result("%", index, "int64")) != "int":
                return None
            return self.array_types[e.array]
        if isinstance(e, SharedLoad):
            return SHARED_ARRAYS[e.array]
        if isinstance(e, SharedAtomicsLoad):
            return "int64"
        if isinstance(e, Binary):
            left, right = self.type_of(e.left), self.type_of(e.right)
            if e.op in ("//", "%", "/"):
                right = numba_types.unify(right, "float64" if e.right.kind == "float" else "int64")
            elif e.op in ("<<", ">>"):
                right = numba_types.result("&", right, "int64")
                if numba_types.kind(left) != "int" or numba_types.kind(right) != "int":
                    return None
            return numba_types.result(e.op, left, right)
        if isinstance(e, Unary):
            op = {"-": "-u", "~": "~", "not ": "not"}[e.op]
            return numba_types.result(op, self.type_of(e.operand))
        if isinstance(e, Compare):
            operands = [self.type_of(o) for o in e.operands]
            ok = all(numba_types.result(op, a, b) == "bool" for op, a, b in zip(e.ops, operands, operands[1:]))
            return "bool" if ok else None
        if isinstance(e, BoolOp):
            return "bool" if all(self.type_of(o) == "bool" for o in e.operands) else None
        if isinstance(e, IfExp):
            if self.type_of(e.test) != "bool":
                return None
            body, orelse = self.type_of(e.body), self.type_of(e.orelse)
            # A constant test leaves only one branch in CPython's bytecode,
            # so Numba sees that branch alone: `a if True else b` has a's type.
            truth = constant_truth(e.test)
            if truth is not None:
                return body if truth else orelse
            test = e.test
            while isinstance(test, Unary) and test.op == "not ":
                test = test.operand
            if isinstance(test, Compare) and all(isinstance(o, Lit) for o in test.operands) and body != orelse:
                return None  # a test of constants: pruned or not, by rules not modelled here
            return numba_types.unify(body, orelse)
        if isinstance(e, Call):
            if e.function in ("abs", "min", "max"):
                return numba_types.result(e.function, *[self.type_of(a) for a in e.arguments])
            if e.function == "or_default":
                # OptionalType of the two, whose value operations take.
                result, default = (self.type_of(a) for a in e.arguments)
                return numba_types.unify(result, default)
            device = next(d for d in self.devices if d.name == e.function)
            return {"int": "int64", "float": "float64"}[device.result_kind]
        if isinstance(e, TupleGet):
            if any(self.type_of(x) is None for x in e.elements):
                return None
            return self.type_of(e.elements[e.index])  # the dynamic index's tuple has one type
        raise TypeError(e)

    def _shape(self, kind, depth):
        r = self.random
        if depth <= 0 or r.random() < 0.25:
            return self.leaf(kind)
        if kind == "int":
            shape = r.choice(["binary", "binary", "cast", "unary", "ifexp", "minmax", "call", "tuple"])
            if shape == "binary":
                op = r.choice(["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^"])
                return self.arithmetic(op, self.expr("int", depth - 1), self.expr("int", depth - 1))
            if shape == "cast":
                return Cast("int", r.choice(INT_TYPES), self.expr("int", depth - 1))
            if shape == "unary":
                return Unary("int", r.choice(["-", "~"]), self.expr("int", depth - 1)) if r.random() < 0.7 \
                    else Call("int", "abs", [self.expr("int", depth - 1)])
            if shape == "ifexp":
                return IfExp("int", self.expr("bool", depth - 1), self.expr("int", depth - 1),
                             self.expr("int", depth - 1))
            if shape == "minmax":
                return Call("int", r.choice(["min", "max"]),
                            [self.expr("int", depth - 1), self.expr("int", depth - 1)])
            if shape == "call":
                return self.device_call("int", depth) or self.leaf("int")
            if r.random() < 0.4:
                # Read at a run-time index, in bounds, negative or not.
                count = r.randint(2, 4)
                index = Binary("int", "%", self.exact("int", depth - 1), Lit("int", str(count)))
                if r.random() < 0.5:
                    index = Binary("int", "-", index, Lit("int", str(count)))
                return TupleGet("int", [self.exact("int", depth - 1) for _ in range(count)], 0, index)
            elements = [self.expr(r.choice(["int", "float"]), depth - 1) for _ in range(r.randint(2, 3))]
            index = r.choice([i for i, e in enumerate(elements) if e.kind == "int"] or [None])
            if index is None:
                return self.leaf("int")
            return TupleGet("int", elements, index)
        if kind == "float":
            shape = r.choice(["binary", "binary", "cast", "unary", "ifexp", "minmax", "call", "mixed"])
            if shape == "binary":
                op = r.choice(["+", "-", "*", "/", "//", "%"])
                return Binary("float", op, self.expr("float", depth - 1), self.expr("float", depth - 1))
            if shape == "mixed":
                op = r.choice(["+", "-", "*", "/"])
                return Binary("float", op, self.expr("float", depth - 1), self.expr("int", depth - 1))
            if shape == "cast":
                return Cast("float", r.choice(FLOAT_TYPES), self.expr(r.choice(["int", "float"]), depth - 1))
            if shape == "unary":
                return Unary("float", "-", self.expr("float", depth - 1)) if r.random() < 0.6 \
                    else Call("float", "abs", [self.expr("float", depth - 1)])
            if shape == "ifexp":
                return IfExp("float", self.expr("bool", depth - 1), self.expr("float", depth - 1),
                             self.expr("float", depth - 1))
            if shape == "minmax":
                return Call("float", r.choice(["min", "max"]),
                            [self.expr("float", depth - 1), self.expr("float", depth - 1)])
            return self.device_call("float", depth) or self.leaf("float")
        shape = r.choice(["compare", "compare", "boolop", "not", "ifexp"])
        if shape == "compare":
            operand_kind = r.choice(["int", "int", "float"])
            count = r.choice([1, 1, 2])
            return Compare("bool", [r.choice(["<", "<=", ">", ">=", "==", "!="]) for _ in range(count)],
                           [self.expr(operand_kind, depth - 1) for _ in range(count + 1)])
        if shape == "boolop":
            return BoolOp("bool", r.choice(["and", "or"]),
                          [self.expr("bool", depth - 1) for _ in range(r.randint(2, 3))])
        if shape == "not":
            return Unary("bool", "not ", self.expr("bool", depth - 1))
        return IfExp("bool", self.expr("bool", depth - 1), self.expr("bool", depth - 1),
                     self.expr("bool", depth - 1))

    def device_call(self, kind, depth):
        candidates = [d for d in self.devices if d.result_kind == kind]
        if not candidates:
            return None
        device = self.random.choice(candidates)
        arguments = [self.exact(k, depth - 1) for _, k in device.parameters]
        # One call in four passes some trailing arguments as an unpacked
        # tuple; Numba's bytecode front end refuses one whose arguments hold
        # control flow (CALL_FUNCTION_EX), so those are passed as written.
        unpacked_from = self.random.randint(0, len(arguments)) if self.random.random() < 0.25 else None
        if unpacked_from is not None and any(_branches(a) for a in arguments):
            unpacked_from = None
        # Numba inlines no call of a nested function that unpacks a tuple.
        if device.nested:
            unpacked_from = None
        call = Call(kind, device.name, arguments, unpacked_from)
        if device.optional:
            # or_default's result is Optional in Numba, which casts
            # (np.int32(x)) and tuples iterated or indexed at run time (of
            # one type only) refuse: arithmetic unwraps it, exactly.
            op, identity = {"int": ("+", "0"), "float": ("*", "1.0")}[kind]
            return Binary(kind, op, Call(kind, "or_default", [call, self.exact(kind, depth - 1)]),
                          Lit(kind, identity))
        return call


def _calls(body, function):
    """Whether the statements call `function`."""
    def in_expr(expr):
        return (isinstance(expr, Call) and expr.function == function) or any(map(in_expr, expr.children()))
    return any(in_expr(e) for stmt in walk_statements(body) for e in stmt.exprs())


def _branches(expr):
    """Whether `expr` compiles to jumps: a conditional, `and`/`or` (also as
    the guards of a division), or a chained comparison."""
    if isinstance(expr, Compare) and len(expr.ops) > 1:
        return True
    text = expr.render(host=True)
    return " if " in text or " and " in text or " or " in text or any(_branches(c) for c in expr.children())


def generate(seed):
    return Generator(seed).program()
