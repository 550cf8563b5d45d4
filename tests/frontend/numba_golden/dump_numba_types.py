"""Dump Numba's own typing of Kiln kernel modules as golden JSON files.

Run from the repository root with the reference virtualenv (numba 0.68.1,
numba-cuda 0.30.4); no GPU or CUDA driver is needed:

    CUDA_HOME=/usr/local/cuda /opt/numba-ref/bin/python \
        tests/frontend/numba_golden/dump_numba_types.py examples/*.py

For every kernel module given, ``<module stem>.json`` is written next to this
script (or into ``--out-dir``)::

    {"module": "examples/mandelbrot.py",
     "functions": [
       {"name": "create_fractal", "kind": "kernel",
        "args": ["float64", ..., "array(uint8, 2d, C)", "int64"],
        "return": "none",
        "locals": {"height": ["int64"], ...}},
       ...]}

One entry per specialization:

* ``kernel``: each signature given to ``@cuda.jit`` (return ``none``);
* ``device``: each distinct argument-type tuple a ``@cuda.jit(device=True)``
  function of the module was compiled for while compiling the module's
  kernels, ufuncs and reductions (plus any explicit device signatures);
* ``ufunc``: each signature of a ``@vectorize(..., target='cuda')`` ufunc,
  i.e. its scalar "core" device function, compiled with the declared
  return type;
* ``reduce``: a ``@cuda.reduce`` operator, compiled as a device function for
  ``(T, T)`` with T in int32, int64, float32, float64 (return type inferred).

Types are ``str()`` of Numba types. ``locals`` maps each source variable
(parameters included) to the sorted distinct types of all its SSA versions
(``x``, ``x.1``, ...) after ``types.unliteral``; ``$`` temporaries and
``arg.`` entries are dropped. Entries are sorted by (name, args).

How compilation is done without a GPU: Numba compiles signatures given to
``@cuda.jit`` eagerly at import, and asks the driver for the current
device's compute capability, which fails here. Before importing a module
this script therefore (1) replaces ``numba.cuda.dispatcher.get_current_device``
with a stub reporting compute capability ``CC`` (device functions and ufunc
cores then compile through Numba's normal path, which stops at LLVM IR), and
(2) makes ``CUDADispatcher.compile`` only record kernel signatures (and
``disable_compile`` skip its "has overloads" assertion). Kernels
are then typed with ``numba.cuda.compiler.compile_cuda`` using the same
options ``numba.cuda.dispatcher._Kernel`` passes (debug, fastmath,
max_registers, ...), without generating PTX. Typing does not depend on these
stubs: the typemaps are Numba's own.
"""

import argparse
import importlib.util
import json
import os
import re
import sys

# Compute capability used for all compilation (typing does not depend on it).
CC = (7, 5)

# Element types a @cuda.reduce operator is specialized for.
REDUCE_DTYPES = ("int32", "int64", "float32", "float64")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

_SSA_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.\d+)*$")


# --------------------------------------------------------------------------
# Patching Numba so that modules import and compile without a CUDA driver


class _FakeDevice:
    compute_capability = CC


def _install_patches():
    import numba.cuda.dispatcher as cuda_dispatcher

    cuda_dispatcher.get_current_device = lambda: _FakeDevice()

    def record_kernel_signature(self, sig):
        """Stand-in for CUDADispatcher.compile: remember the kernel signature."""
        from numba.cuda.core import sigutils

        argtypes, _ = sigutils.normalize_signature(sig)
        recorded = self.__dict__.setdefault("_kiln_kernel_sigs", [])
        if argtypes not in recorded:
            recorded.append(argtypes)
        return None

    def disable_compile(self, val=True):
        """Stand-in for disable_compile: kernels now have no overloads to check."""
        self._can_compile = not val

    cuda_dispatcher.CUDADispatcher.compile = record_kernel_signature
    cuda_dispatcher.CUDADispatcher.disable_compile = disable_compile


# --------------------------------------------------------------------------
# Compiling (typing) each kind of function


def _compile_kernel(disp, argtypes):
    """Type a kernel exactly as numba.cuda.dispatcher._Kernel does."""
    from numba.cuda import types
    from numba.cuda.compiler import compile_cuda

    opts = disp.targetoptions
    nvvm_options = {"fastmath": opts.get("fastmath", False), "opt": 3 if opts.get("opt", True) else 0}
    if opts.get("debug"):
        nvvm_options["g"] = None
    return compile_cuda(
        disp.py_func,
        types.void,
        argtypes,
        debug=opts.get("debug", False),
        lineinfo=opts.get("lineinfo", False),
        forceinline=opts.get("forceinline", False),
        fastmath=opts.get("fastmath", False),
        nvvm_options=nvvm_options,
        cc=CC,
        max_registers=opts.get("max_registers"),
        lto=opts.get("lto", False),
    )


def _ufunc_cores(ufunc):
    """(argtypes, compile result) of each signature of a CUDA ufunc, in order."""
    for _resdtype, stager in ufunc.functions.values():
        core = stager.py_func.__globals__["__core__"]
        for args, cres in core.overloads.items():
            yield core.py_func, args, cres


def _compile_reduce(reduce_obj, typename):
    from numba import cuda
    from numba.cuda import types

    t = getattr(types, typename)
    disp = cuda.jit(device=True)(reduce_obj._functor)
    return disp.compile_device((t, t))


# --------------------------------------------------------------------------
# Extracting the JSON entries


def _locals(typemap):
    from numba.cuda import types

    found = {}
    for var, ty in typemap.items():
        if var.startswith("$") or var.startswith("arg."):
            continue
        m = _SSA_NAME.match(var)
        if m is None:
            raise ValueError(f"unexpected variable name in typemap: {var!r}")
        found.setdefault(m.group(1), set()).add(str(types.unliteral(ty)))
    return {name: sorted(tys) for name, tys in sorted(found.items())}


def _entry(name, kind, args, cres):
    return {
        "name": name,
        "kind": kind,
        "args": [str(a) for a in args],
        "return": str(cres.signature.return_type),
        "locals": _locals(cres.fndesc.typemap),
    }


def _classify(module):
    """Split the module's decorated functions into kinds (definition order)."""
    from numba.cuda.dispatcher import CUDADispatcher
    from numba.cuda.kernels.reduction import Reduce
    from numba.cuda.vectorizers import CUDAUFuncDispatcher

    kernels, devices, ufuncs, reduces = [], [], [], []
    for attr, obj in vars(module).items():
        if isinstance(obj, CUDADispatcher):
            if obj.py_func.__module__ != module.__name__:
                continue  # imported from elsewhere
            (devices if obj.targetoptions.get("device") else kernels).append((attr, obj))
        elif isinstance(obj, CUDAUFuncDispatcher):
            ufuncs.append((attr, obj))
        elif isinstance(obj, Reduce):
            if obj._functor.__module__ == module.__name__:
                reduces.append((attr, obj))
    return kernels, devices, ufuncs, reduces


def dump_module(path):
    """Import the kernel module at `path`, type everything, return the JSON dict."""
    abspath = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(abspath))[0]
    modname = f"kiln_golden_{stem}"
    spec = importlib.util.spec_from_file_location(modname, abspath)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)

    kernels, devices, ufuncs, reduces = _classify(module)
    entries = []

    for name, disp in kernels:
        sigs = disp.__dict__.get("_kiln_kernel_sigs")
        if not sigs:
            raise ValueError(f"{path}: kernel {name!r} has no signature in its decorator")
        for argtypes in sigs:
            entries.append(_entry(disp.py_func.__name__, "kernel", argtypes, _compile_kernel(disp, argtypes)))

    for name, ufunc in ufuncs:
        for py_func, args, cres in _ufunc_cores(ufunc):
            entries.append(_entry(py_func.__name__, "ufunc", args, cres))

    for name, red in reduces:
        for typename in REDUCE_DTYPES:
            cres = _compile_reduce(red, typename)
            entries.append(_entry(red._functor.__name__, "reduce", cres.signature.args, cres))

    # Device functions last: compiling the above populated their overloads.
    for name, disp in devices:
        for args, cres in disp.overloads.items():
            entries.append(_entry(disp.py_func.__name__, "device", args, cres))

    entries.sort(key=lambda e: (e["name"], e["args"], e["kind"]))

    if os.path.commonpath([abspath, REPO_ROOT]) == REPO_ROOT:
        shown = os.path.relpath(abspath, REPO_ROOT).replace(os.sep, "/")
    else:
        shown = path
    return {"module": shown, "functions": entries}


def format_json(result):
    """Deterministic, diff-friendly JSON: one local per line, type lists inline."""
    dumps = json.dumps
    lines = ["{", f'  "module": {dumps(result["module"])},', '  "functions": [']
    for n, e in enumerate(result["functions"]):
        lines.append("    {")
        lines.append(f'      "name": {dumps(e["name"])},')
        lines.append(f'      "kind": {dumps(e["kind"])},')
        lines.append(f'      "args": {dumps(e["args"])},')
        lines.append(f'      "return": {dumps(e["return"])},')
        items = list(e["locals"].items())
        if items:
            lines.append('      "locals": {')
            for i, (var, tys) in enumerate(items):
                comma = "," if i < len(items) - 1 else ""
                lines.append(f"        {dumps(var)}: {dumps(tys)}{comma}")
            lines.append("      }")
        else:
            lines.append('      "locals": {}')
        lines.append("    }" + ("," if n < len(result["functions"]) - 1 else ""))
    lines.append("  ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == result
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="+", help="kernel module paths (e.g. examples/*.py)")
    parser.add_argument("--out-dir", default=HERE, help="where to write <stem>.json (default: this folder)")
    args = parser.parse_args(argv)

    sys.dont_write_bytecode = True  # keep __pycache__ out of examples/
    _install_patches()

    for path in args.modules:
        result = dump_module(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        out = os.path.join(args.out_dir, stem + ".json")
        with open(out, "w") as f:
            f.write(format_json(result))
        print(f"{path}: {len(result['functions'])} entries -> {os.path.relpath(out)}")


if __name__ == "__main__":
    main()
