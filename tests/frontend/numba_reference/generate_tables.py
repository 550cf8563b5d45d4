#!/usr/bin/env python
"""Generate Numba-CUDA typing reference tables for Kiln's front end.

Every result written by this script is obtained from the real Numba-CUDA
(either from the CUDA typing context directly, or by compiling a tiny probe
function with ``numba.cuda.compiler.compile_cuda`` and reading the inferred
type of its local variable ``r``).  Nothing is typed in by hand: the script
only decides *what* to ask.

Reference versions (checked at start-up; see --allow-version-mismatch):
    numba 0.68.1, numba-cuda 0.30.4 (Python 3.11, NumPy 2.4)

Regenerate (from the repository root):
    CUDA_HOME=/usr/local/cuda /opt/numba-ref/bin/python \
        tests/frontend/numba_reference/generate_tables.py

Options:
    --out DIR                 write the JSON files to DIR (default: this
                              script's folder)
    --jobs N                  number of probe worker processes (default: CPUs)
    --allow-version-mismatch  run with other numba / numba-cuda versions

No GPU is needed.  Typing only needs the typing/target contexts; the only
place that touches the driver is the on-demand compilation of helper device
functions (e.g. some float16 math), which asks for the *current device's*
compute capability.  Workers replace that lookup with a stand-in device that
reports COMPUTE_CAPABILITY, the same capability the probes are compiled for.

Output files (pretty-printed, sorted keys, deterministic):
    meta.json, conversions.json, unify.json, binary_ops.json,
    unary_ops.json, builtins.json, math.json, numpy.json, type_names.json
See README.md in this folder for the format of each file.

Probe protocol
--------------
A probe is the function::

    def probe(<params>):
        <stmts>            # optional, e.g. "x += y"
        r = <expr>
        return r

compiled with ``compile_cuda(probe, None, argtypes, cc=COMPUTE_CAPABILITY)``.
Typed operands become parameters named x, y, z (in order of appearance);
literal operands (``2``, ``2.0``, ``True``) are written into the source.
The result is ``str(types.unliteral(typemap["r"]))`` (the ``*_literal_only``
sections keep the literal type), or, if compilation fails,
``{"error": <first meaningful line of the message>, "exception": <class>,
"stage": "typing" | "lowering"}``.  Stage "typing" means Numba's type
inference rejected the expression; "lowering" means type inference succeeded
(its result is in ``"typed_as"``) but a later step, normally CUDA lowering,
failed, so Numba-CUDA cannot compile the expression either.
"""

import argparse
import cmath
import concurrent.futures
import inspect
import json
import math
import multiprocessing
import os
import re
import sys
from dataclasses import dataclass

import numpy as np

EXPECTED_VERSIONS = {"numba": "0.68.1", "numba-cuda": "0.30.4"}
COMPUTE_CAPABILITY = (7, 5)

# The scalar types swept by every table, as Numba type attribute names.
SCALAR_NAMES = [
    "boolean", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]

# Literal operands written directly into probe sources.
INT_LITERAL, FLOAT_LITERAL, BOOL_LITERAL = "2", "2.0", "True"
LITERAL_OPERANDS = [INT_LITERAL, FLOAT_LITERAL, BOOL_LITERAL]

BINARY_OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^",
                    "<<", ">>", "<", "<=", ">", ">=", "==", "!="]
AUGMENTABLE_OPERATORS = BINARY_OPERATORS[:12]   # arithmetic/bitwise ones
UNARY_OPERATORS = ["-", "+", "~", "not "]

# Mixed-type argument pairs probed in addition to same-type pairs for the
# (many) binary NumPy ufuncs; every other binary table sweeps all pairs.
UFUNC_MIXED_PAIRS = [
    ("boolean", "int32"), ("int8", "uint8"), ("int16", "int32"),
    ("int32", "int64"), ("int32", "uint32"), ("int64", "uint64"),
    ("uint32", "uint64"), ("int32", "float32"), ("float32", "int32"),
    ("int64", "float32"), ("float16", "float32"), ("float32", "float64"),
    ("float64", "float32"), ("int32", "float16"), ("float32", "complex64"),
    ("float64", "complex64"), ("complex64", "complex128"),
]


# ---------------------------------------------------------------------------
# Probes
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Operand:
    """A probe operand: a typed parameter (``ty`` set) or literal source."""
    label: str               # type name ("int32") or literal source ("2")
    ty: str = None           # Numba type name when the operand is a param


def typed(name):
    return Operand(label=str_of_type_name(name), ty=name)


def literal(src):
    return Operand(label=src)


@dataclass(frozen=True)
class Probe:
    expr: str                # right-hand side assigned to ``r``
    args: tuple = ()         # Numba type names of parameters x, y, z
    stmts: str = ""          # statements executed before ``r = expr``

    def source(self):
        params = ", ".join("xyz"[: len(self.args)])
        body = "".join(f"    {s}\n" for s in self.stmts.splitlines())
        return f"def probe({params}):\n{body}    r = {self.expr}\n    return r\n"


def bind(template, operands):
    """Fill ``template`` ({0}, {1}, ...) with operands; return a Probe.

    Typed operands become parameters x, y, z in order; literals are inlined.
    """
    names, args = [], []
    for op in operands:
        if op.ty is None:
            names.append(op.label)
        else:
            names.append("xyz"[len(args)])
            args.append(op.ty)
    return Probe(expr=template.format(*names), args=tuple(args))


# ---------------------------------------------------------------------------
# Worker side: compiles probes with Numba-CUDA.  Runs in spawned processes so
# the main process's typing context is never touched by compilation (the
# type manager caches conversions installed during overload resolution).
# ---------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_MODULE_PATH = re.compile(r"<module '([^']+)' from '[^']*'>")
_LLVM_IR_TAIL = re.compile(r':\s*%".*$')   # "Cannot cast a to b: %"x" = ..."


def short_error(exc):
    """First meaningful line of a Numba error message (deterministic)."""
    text = _ANSI.sub("", str(exc))
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("Failed in cuda mode pipeline"):
            line = _MODULE_PATH.sub(r"<module '\1'>", line)
            line = _LLVM_IR_TAIL.sub("", line)
            return _ADDRESS.sub("0x?", line)
    return type(exc).__name__


# Typemaps produced by type inference in this worker, keyed by the Python
# function that was typed (helper device functions are typed too).
_TYPED = {}


def _worker_init():
    os.environ["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"] = "1"
    import types as pytypes
    from numba.cuda import compiler, dispatcher
    from numba.cuda.core import typed_passes
    from numba.cuda.descriptor import cuda_target

    # No GPU: report a stand-in "current device" (see module docstring).
    fake_device = pytypes.SimpleNamespace(compute_capability=COMPUTE_CAPABILITY)
    dispatcher.get_current_device = lambda: fake_device
    compiler.get_current_device = lambda: fake_device

    # Observe (not alter) type inference, so that a probe that fails *after*
    # typing (e.g. no CUDA lowering) can still report what typing inferred.
    type_inference_stage = typed_passes.type_inference_stage

    def recording_type_inference_stage(typingctx, targetctx, interp, *args, **kws):
        result = type_inference_stage(typingctx, targetctx, interp, *args, **kws)
        _TYPED[interp.func_id.func] = result.typemap
        return result

    typed_passes.type_inference_stage = recording_type_inference_stage
    cuda_target.typing_context.refresh()


def run_probe(probe):
    """Compile one probe; return ("ok", type_str, raw_type_str) or an error."""
    from numba.cuda import types
    from numba.cuda.compiler import compile_cuda

    namespace = {"math": math, "cmath": cmath, "np": np}
    exec(probe.source(), namespace)
    pyfunc = namespace["probe"]
    argtypes = tuple(getattr(types, name) for name in probe.args)
    _TYPED.clear()
    try:
        cres = compile_cuda(pyfunc, None, argtypes, cc=COMPUTE_CAPABILITY)
    except Exception as exc:  # noqa: BLE001 - every failure is data here
        err = {"error": short_error(exc), "exception": type(exc).__name__}
        typemap = _TYPED.get(pyfunc)
        if typemap is None:
            err["stage"] = "typing"
        else:
            err["stage"] = "lowering"
            err["typed_as"] = str(types.unliteral(typemap["r"]))
        return ("error", err)
    finally:
        _TYPED.clear()
    ty = cres.fndesc.typemap["r"]
    return ("ok", str(types.unliteral(ty)), str(ty))


def run_all(probes, jobs):
    """Run probes (deduplicated) in worker processes; return {probe: raw}."""
    unique = sorted(set(probes), key=lambda p: (p.stmts, p.expr, p.args))
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(
            max_workers=jobs, mp_context=ctx,
            initializer=_worker_init) as pool:
        raw = list(pool.map(run_probe, unique, chunksize=32))
    return dict(zip(unique, raw))


def outcome(result):
    """What a result means, ignoring error wording (e.g. 'iadd' vs 'add')."""
    if isinstance(result, str):
        return result
    return ("error", result["stage"], result.get("typed_as"))


def result_of(raw, keep_literal=False):
    if raw[0] == "error":
        return raw[1]
    return raw[2] if keep_literal else raw[1]


def record(results, probe, keep_literal=False, **fields):
    """A table row: descriptive fields + the probe itself + its result."""
    row = dict(fields)
    row["expr"] = probe.expr
    if probe.stmts:
        row["stmts"] = probe.stmts
    row["args"] = list(map(str_of_type_name, probe.args))
    row["result"] = result_of(results[probe], keep_literal)
    return row


# ---------------------------------------------------------------------------
# Main-process helpers (typing context queries; no compilation)
# ---------------------------------------------------------------------------

def numba_types():
    from numba.cuda import types
    return types


def str_of_type_name(name):
    return str(getattr(numba_types(), name))


def versions():
    from importlib.metadata import version
    return {"numba": version("numba"), "numba-cuda": version("numba-cuda"),
            "numpy": np.__version__, "python": sys.version.split()[0]}


def typing_context():
    from numba.cuda.descriptor import cuda_target
    ctx = cuda_target.typing_context
    ctx.refresh()
    return ctx


def scalar_types():
    types = numba_types()
    return [getattr(types, n) for n in SCALAR_NAMES]


def literal_source_types():
    types = numba_types()
    return [types.IntegerLiteral(1), types.BooleanLiteral(True)]


def conversion_name(conv):
    return None if conv is None else conv.name


def build_conversions(tctx):
    rows = []
    for src in scalar_types() + literal_source_types():
        for dst in scalar_types():
            rows.append({"from": str(src), "to": str(dst),
                         "kind": conversion_name(tctx.can_convert(src, dst))})
    return rows


def build_unify(tctx):
    """unify_types(a, b) over unordered pairs; flags order dependence."""
    def s(ty):
        return None if ty is None else str(ty)

    scalars = scalar_types()
    pairs = [(a, b) for i, a in enumerate(scalars) for b in scalars[i:]]
    pairs += [(lit, b) for lit in literal_source_types() for b in scalars]
    rows = []
    for a, b in pairs:
        row = {"a": str(a), "b": str(b), "result": s(tctx.unify_types(a, b))}
        variants = {"unify_types(b, a)": s(tctx.unify_types(b, a)),
                    "unify_pairs(a, b)": s(tctx.unify_pairs(a, b)),
                    "unify_pairs(b, a)": s(tctx.unify_pairs(b, a))}
        differing = {k: v for k, v in variants.items() if v != row["result"]}
        if differing:
            row["order_dependent"] = differing
        rows.append(row)
    return rows


def build_type_names():
    """Evaluate names/annotations with numba-cuda's signature parser."""
    from numba.cuda.core import sigutils
    types = numba_types()

    requested = [
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
        "uint64", "intp", "uintp", "intc", "uintc", "float16", "float32",
        "float64", "complex64", "complex128", "boolean", "bool_", "bool",
        "b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4",
        "f8", "c8", "c16", "byte", "char", "uchar", "short", "ushort",
        "int_", "uint", "long_", "ulong", "longlong", "ulonglong", "float_",
        "double", "void", "none", "ssize_t", "size_t", "bfloat16",
        # Python builtins that are not Numba types (resolve to Python's own)
        "int", "float", "complex",
    ]
    scalar_classes = (types.Number, types.Boolean, types.NoneType)
    exported = sorted(n for n, v in vars(types).items()
                      if not n.startswith("_")
                      and isinstance(v, types.Type)
                      and isinstance(v, scalar_classes))

    def parse_arg(text):
        try:
            args, _ = sigutils.normalize_signature(f"void({text})")
            return str(args[0])
        except Exception as exc:  # noqa: BLE001
            return {"error": short_error(exc), "exception": type(exc).__name__}

    def parse_sig(text):
        try:
            args, ret = sigutils.normalize_signature(text)
            return {"args": [str(a) for a in args],
                    "return_type": None if ret is None else str(ret)}
        except Exception as exc:  # noqa: BLE001
            return {"error": short_error(exc), "exception": type(exc).__name__}

    annotations = ["float32[:]", "float32[::1]", "float32[:, ::1]",
                   "float32[::1, :]", "float32[:, :, ::1]", "float32[:,1]",
                   "int32[:,:]", "float32[:, :]", "float32[::1, :, :]",
                   "float64[:, :, :, ::1]", "boolean[:]", "complex64[::1]",
                   "float32[1:]", "float32[::2]", "float32[:, ::2]",
                   "float32[:][:]", "float32[...]"]
    signatures = ["void(float32[:], int32)", "float32(float32, float32)",
                  "(float32[:], int64)", "void()", "int64(intp)",
                  "void(float32[:, ::1], float32[::1, :])"]
    return {
        "parser": "numba.cuda.core.sigutils.normalize_signature; a name or "
                  "annotation T is parsed as the signature 'void(T)'",
        "names": {n: parse_arg(n) for n in sorted(set(requested) | set(exported))},
        "exported_scalar_names": exported,
        "array_annotations": {a: parse_arg(a) for a in annotations},
        "signatures": {s: parse_sig(s) for s in signatures},
    }


# ---------------------------------------------------------------------------
# Probe sets (each returns probes plus a function building the table)
# ---------------------------------------------------------------------------

def scalar_operands():
    return [typed(n) for n in SCALAR_NAMES]


def all_pairs(operands):
    return [(a, b) for a in operands for b in operands]


def binary_table():
    scalars = scalar_operands()
    lits = [literal(s) for s in LITERAL_OPERANDS]
    pairs = all_pairs(scalars)
    pairs += [(s, lit) for s in scalars for lit in lits]
    pairs += [(lit, s) for lit in lits for s in scalars]
    lit_pairs = [(literal(a), literal(b))
                 for a in ("7", "7.0", "True") for b in ("2", "2.0", "True")]

    plain, aug, lit_only = [], [], []
    for op in BINARY_OPERATORS:
        for lhs, rhs in pairs:
            plain.append((op, lhs, rhs, bind("{0} %s {1}" % op, [lhs, rhs])))
        for lhs, rhs in lit_pairs:
            lit_only.append((op, lhs, rhs, bind("{0} %s {1}" % op, [lhs, rhs])))
    for op in AUGMENTABLE_OPERATORS:
        for lhs, rhs in pairs:
            if lhs.ty is None:
                continue   # cannot augment-assign to a literal
            p = bind("{0} %s {1}" % op, [lhs, rhs])
            rhs_src = "y" if rhs.ty else rhs.label
            aug_probe = Probe(expr="x", args=p.args, stmts=f"x {op}= {rhs_src}")
            aug.append((op, lhs, rhs, p, aug_probe))

    probes = [p for *_, p in plain] + [p for *_, p in lit_only]
    probes += [a for *_, a in aug]

    def build(results):
        rows = [record(results, p, op=op, lhs=l.label, rhs=r.label)
                for op, l, r, p in plain]
        literal_rows = [record(results, p, keep_literal=True, op=op,
                               lhs=l.label, rhs=r.label)
                        for op, l, r, p in lit_only]
        differences = []
        for op, l, r, p, a in aug:
            plain_res = result_of(results[p])
            aug_res = result_of(results[a])
            if outcome(plain_res) != outcome(aug_res):
                row = record(results, a, op=op + "=", lhs=l.label, rhs=r.label)
                row["plain_result"] = plain_res
                differences.append(row)
        return {
            "binary": rows,
            "binary_literal_only": literal_rows,
            "augmented_assignment": {
                "operators_checked": [o + "=" for o in AUGMENTABLE_OPERATORS],
                "probes_checked": len(aug),
                "differences_from_plain_operator": differences,
                "difference_criterion": "result type differs, or one form "
                                        "fails, or both fail at different "
                                        "stages / with different typed_as",
            },
        }
    return probes, build


def unary_table():
    rows_spec = []
    for op in UNARY_OPERATORS:
        for operand in scalar_operands():
            rows_spec.append((op, operand, False, bind(op + "{0}", [operand])))
        for lit in LITERAL_OPERANDS:
            rows_spec.append((op, literal(lit), True, bind(op + "{0}", [literal(lit)])))

    def build(results):
        return {
            "unary": [record(results, p, op=op.strip(), operand=o.label)
                      for op, o, is_lit, p in rows_spec if not is_lit],
            "unary_literal_only": [
                record(results, p, keep_literal=True, op=op.strip(),
                       operand=o.label)
                for op, o, is_lit, p in rows_spec if is_lit],
        }
    return [p for *_, p in rows_spec], build


def function_rows(specs, results):
    return [record(results, p, func=f, operands=[o.label for o in ops])
            for f, ops, p in specs]


def builtins_table():
    unary = ["abs({0})", "round({0})", "round({0}, 2)", "int({0})",
             "float({0})", "bool({0})", "complex({0})", "{0}.real",
             "{0}.imag", "{0}.conjugate()"]
    binary = ["min({0}, {1})", "max({0}, {1})", "complex({0}, {1})",
              "pow({0}, {1})", "divmod({0}, {1})"]
    one = scalar_operands() + [literal(s) for s in LITERAL_OPERANDS]
    specs = []
    for tmpl in unary:
        # Attribute access on a bare literal ("2.real") is not valid syntax.
        for o in (scalar_operands() if tmpl.startswith("{0}.") else one):
            specs.append((tmpl.format("x"), [o], bind(tmpl, [o])))
    for tmpl in binary:
        for a, b in all_pairs(scalar_operands()):
            specs.append((tmpl.format("x", "y"), [a, b], bind(tmpl, [a, b])))
    # A few wider forms, same type for every argument.
    for tmpl in ["min({0}, {1}, {2})", "max({0}, {1}, {2})",
                 "pow({0}, {1}, {2})"]:
        for o in scalar_operands():
            specs.append((tmpl.format("x", "y", "z"), [o, o, o],
                          bind(tmpl, [o, o, o])))

    def build(results):
        return {"builtins": function_rows(specs, results)}
    return [p for *_, p in specs], build


# Probe shapes for math/cmath functions whose arity cannot be read from
# inspect.signature (no text signature) or that take iterables/varargs.
MATH_SPECIAL_FORMS = {
    "log": ["{f}({0})", "{f}({0}, {1})"],
    "hypot": ["{f}({0}, {1})", "{f}({0}, {1}, {2})"],
    "gcd": ["{f}({0}, {1})"],
    "lcm": ["{f}({0}, {1})"],
    "perm": ["{f}({0})", "{f}({0}, {1})"],
    "fsum": ["{f}(({0}, {0}))"],
    "prod": ["{f}(({0}, {0}))"],
    "dist": ["{f}(({0}, {0}), ({0}, {0}))"],
}


def math_forms(name, fn):
    """Call shapes to probe for a math/cmath function."""
    if name in MATH_SPECIAL_FORMS:
        return MATH_SPECIAL_FORMS[name]
    params = inspect.signature(fn).parameters.values()
    npos = sum(1 for p in params if p.kind == p.POSITIONAL_ONLY
               or (p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty))
    return ["{f}(" + ", ".join("{%d}" % i for i in range(npos)) + ")"]


def module_members(module):
    names = sorted(n for n in dir(module) if not n.startswith("_"))
    funcs = [n for n in names if callable(getattr(module, n))]
    consts = [n for n in names if not callable(getattr(module, n))]
    return funcs, consts


def sweep(form, func_expr, extra_literals=True):
    """Probe specs for one call shape: all scalar combos (+ literal args)."""
    arity = len(set(re.findall(r"\{(\d)\}", form)))
    tmpl = form.replace("{f}", func_expr)
    scalars = scalar_operands()
    specs = []
    if arity == 1:
        operand_lists = [[o] for o in scalars]
        if extra_literals:
            operand_lists += [[literal(INT_LITERAL)], [literal(FLOAT_LITERAL)]]
    elif arity == 2:
        operand_lists = [list(p) for p in all_pairs(scalars)]
        if extra_literals:
            operand_lists += [[o, literal(INT_LITERAL)] for o in scalars]
    else:
        operand_lists = [[o] * arity for o in scalars]
    for ops in operand_lists:
        specs.append((ops, bind(tmpl, ops)))
    return specs


def math_table():
    specs, const_specs = [], []
    members = {}
    for module in (math, cmath):
        mod = module.__name__
        funcs, consts = module_members(module)
        members[mod] = {"functions": funcs, "constants": consts}
        for name in funcs:
            for form in math_forms(name, getattr(module, name)):
                for ops, p in sweep(form, f"{mod}.{name}"):
                    specs.append((f"{mod}.{name}", ops, p))
        for name in consts:
            const_specs.append((f"{mod}.{name}", Probe(expr=f"{mod}.{name}")))

    def build(results):
        return {
            "functions": function_rows(specs, results),
            "constants": [record(results, p, name=n) for n, p in const_specs],
            "module_members": members,
        }
    return [p for *_, p in specs] + [p for _, p in const_specs], build


NUMPY_SCALAR_CONSTRUCTORS = [
    "bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "intp", "uintp", "intc", "uintc", "int_", "uint",
    "byte", "ubyte", "short", "ushort", "long", "ulong", "longlong",
    "ulonglong", "float16", "float32", "float64", "half", "single",
    "double", "longdouble", "complex64", "complex128", "csingle", "cdouble",
    "clongdouble", "float_", "complex_",
]
NUMPY_CONSTANTS = ["pi", "e", "inf", "nan", "newaxis", "euler_gamma",
                   "PINF", "NINF", "PZERO", "NZERO", "NAN", "Inf", "Infinity",
                   "NaN", "infty"]
# Non-ufunc NumPy functions that are commonly applied to scalars.
NUMPY_EXTRA_FUNCTIONS = {
    "round": ["{f}({0})", "{f}({0}, 2)"], "around": ["{f}({0})"],
    "real": ["{f}({0})"], "imag": ["{f}({0})"], "angle": ["{f}({0})"],
    "sinc": ["{f}({0})"], "fix": ["{f}({0})"], "isreal": ["{f}({0})"],
    "iscomplex": ["{f}({0})"], "isneginf": ["{f}({0})"],
    "isposinf": ["{f}({0})"], "nan_to_num": ["{f}({0})"],
    "i0": ["{f}({0})"], "clip": ["{f}({0}, {1}, {1})"],
    "where": ["{f}({0}, {1}, {1})"], "isclose": ["{f}({0}, {1})"],
}


def numpy_table():
    ctor_specs, const_specs, func_specs = [], [], []
    ctor_names = [n for n in NUMPY_SCALAR_CONSTRUCTORS if hasattr(np, n)]
    for name in ctor_names:
        operands = scalar_operands() + [literal(s) for s in LITERAL_OPERANDS]
        for o in operands:
            ctor_specs.append((f"np.{name}", [o], bind(f"np.{name}({{0}})", [o])))
    consts = [n for n in NUMPY_CONSTANTS if hasattr(np, n)]
    for name in consts:
        const_specs.append((f"np.{name}", Probe(expr=f"np.{name}")))

    ufuncs = sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc))
    scalars = scalar_operands()
    binary_pairs = [(o, o) for o in scalars]
    binary_pairs += [(typed(a), typed(b)) for a, b in UFUNC_MIXED_PAIRS]
    binary_pairs += [(o, literal(INT_LITERAL)) for o in scalars]
    binary_pairs += [(o, literal(FLOAT_LITERAL)) for o in scalars]
    for name in ufuncs:
        nin = getattr(np, name).nin
        tmpl = f"np.{name}(" + ", ".join("{%d}" % i for i in range(nin)) + ")"
        if nin == 1:
            op_lists = [[o] for o in scalars]
            op_lists += [[literal(INT_LITERAL)], [literal(FLOAT_LITERAL)]]
        else:
            op_lists = [list(p) for p in binary_pairs]
        for ops in op_lists:
            func_specs.append((f"np.{name}", ops, bind(tmpl, ops)))
    for name, forms in NUMPY_EXTRA_FUNCTIONS.items():
        if not hasattr(np, name):
            continue
        for form in forms:
            for ops, p in sweep(form, f"np.{name}", extra_literals=False):
                func_specs.append((f"np.{name}", ops, p))

    def build(results):
        return {
            "scalar_constructors": function_rows(ctor_specs, results),
            "constants": [record(results, p, name=n) for n, p in const_specs],
            "ufuncs_probed": ufuncs,
            "functions": function_rows(func_specs, results),
        }
    probes = [p for *_, p in ctor_specs] + [p for _, p in const_specs]
    probes += [p for *_, p in func_specs]
    return probes, build


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def write_json(path, data):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--allow-version-mismatch", action="store_true")
    opts = parser.parse_args(argv)

    found = versions()
    for pkg, want in EXPECTED_VERSIONS.items():
        if found[pkg] != want and not opts.allow_version_mismatch:
            sys.exit(f"{pkg} {found[pkg]} found, {want} expected "
                     "(pass --allow-version-mismatch to run anyway)")

    # Typing-context tables first, on a context no compilation has touched.
    tctx = typing_context()
    tables = {
        "conversions.json": build_conversions(tctx),
        "unify.json": build_unify(tctx),
        "type_names.json": build_type_names(),
    }

    probe_tables = {
        "binary_ops.json": binary_table(),
        "unary_ops.json": unary_table(),
        "builtins.json": builtins_table(),
        "math.json": math_table(),
        "numpy.json": numpy_table(),
    }
    all_probes = [p for probes, _ in probe_tables.values() for p in probes]
    print(f"running {len(set(all_probes))} probes on {opts.jobs} workers...",
          file=sys.stderr)
    results = run_all(all_probes, opts.jobs)
    for fname, (_, build) in probe_tables.items():
        tables[fname] = build(results)

    tables["meta.json"] = {
        "versions": found,
        "compute_capability": list(COMPUTE_CAPABILITY),
        "scalars": [str_of_type_name(n) for n in SCALAR_NAMES],
        "literal_operands": LITERAL_OPERANDS,
        "probe_template": Probe(expr="<expr>", args=("int32", "int32"),
                                stmts="<stmts>").source(),
        "probe_count": len(set(all_probes)),
        "generator": "generate_tables.py",
    }
    os.makedirs(opts.out, exist_ok=True)
    for fname, data in sorted(tables.items()):
        write_json(os.path.join(opts.out, fname), data)
        print(f"wrote {fname}", file=sys.stderr)


if __name__ == "__main__":
    main()
