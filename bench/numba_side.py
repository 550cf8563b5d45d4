"""The Numba side of the benchmarks: Numba's own compiler on the examples.

Run by bench/compile_speed.py and bench/register_usage.py with the benchmark
environment's Python (bench/.venv, made by bench/setup.sh), one fresh process
per example:

    CUDA_HOME=/usr/local/cuda bench/.venv/bin/python bench/numba_side.py compile EXAMPLE
    CUDA_HOME=/usr/local/cuda bench/.venv/bin/python bench/numba_side.py ptx EXAMPLE --ptx-archs 75,80,90 --out DIR

`compile` times, in this process, what a Numba user's build of the
example's kernels for Kiln's default architectures would cost:
`numba.cuda.compile_ptx` for every specialization and every PTX target Kiln
compiles (sm_75, 80, 86, 89, 90), then the toolkit's ptxas for every cubin
architecture from the same PTX Kiln uses (sm_100 and sm_120 from the sm_90
PTX), with the ptxas flags Kiln passes. Prints one JSON object.

`module PATH --signature SIG` does the same for every `@cuda.jit` kernel of
the module file PATH, each compiled for the one signature SIG (a Python
expression over numba's namespace).

`ptx` writes `<stem>.sm_XX.ptx` for every specialization (stems as Kiln
names its output files: `<kernel>.<n>`) and prints a JSON list of them with
the ptxas flags each kernel's options call for.

SPECS below lists every kernel specialization of examples/*.py: the
signatures are the examples' decorators', ufuncs and reductions given the
argument types of the kernels Kiln synthesizes for them (1-d arrays of any
layout; a reduction's partials C-contiguous), so that both compilers
compile the same signature. No GPU is needed: importing an example compiles
its signatures eagerly and asks the driver for the current device, so the
kernel dispatchers' `compile` only records here, and the current device is a
stub (as tests/frontend/numba_golden/dump_numba_types.py does); the PTX
itself comes from `compile_ptx` with an explicit compute capability.
"""

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pathlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
CUDA_HOME = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))

# (example, kind, function, signature): every kernel specialization Kiln
# builds from examples/*.py, in Kiln's order (its output files are
# <function>.<n>.*, n counting each function's specializations from 0).
# Signatures are Python expressions over numba.types and the example's
# globals (monte_carlo_pi's xoroshiro128p_type).
SPECS = [
    ("atomics", "kernel", "thread_counter_race", "void(int32[::1])"),
    ("atomics", "kernel", "thread_counter_safe", "void(int32[::1])"),
    ("haversine", "kernel", "haversine", "void(float32[::1], float32[::1], float32, float32, float32[::1])"),
    ("haversine", "kernel", "haversine", "void(float64[::1], float64[::1], float64, float64, float64[::1])"),
    ("histogram", "kernel", "cuda_histogram", "void(float32[::1], float32, float32, int32[::1])"),
    ("histogram", "kernel", "cuda_histogram_shared", "void(float32[::1], float32, float32, int32[::1])"),
    ("mandelbrot", "kernel", "create_fractal", "void(float64, float64, float64, float64, uint8[:, ::1], int64)"),
    ("monte_carlo_pi", "kernel", "compute_pi", "void(xoroshiro128p_type[:], int64, float32[::1])"),
    ("normalize", "kernel", "normalize", "void(float32[:, ::1])"),
    ("reciprocal", "kernel", "reciprocal", "void(float64[::1])"),
    ("reductions", "reduction", "sum_reduce", "void(int32[:], int32[::1], int32, boolean)"),
    ("reductions", "reduction", "sum_reduce", "void(int64[:], int64[::1], int64, boolean)"),
    ("reductions", "reduction", "sum_reduce", "void(float32[:], float32[::1], float32, boolean)"),
    ("reductions", "reduction", "sum_reduce", "void(float64[:], float64[::1], float64, boolean)"),
    ("reductions", "reduction", "max_reduce", "void(int32[:], int32[::1], int32, boolean)"),
    ("reductions", "reduction", "max_reduce", "void(int64[:], int64[::1], int64, boolean)"),
    ("reductions", "reduction", "max_reduce", "void(float32[:], float32[::1], float32, boolean)"),
    ("reductions", "reduction", "max_reduce", "void(float64[:], float64[::1], float64, boolean)"),
    ("rounding", "kernel", "gpu_round", "void(float64[::1], float64[::1], int64)"),
    ("transpose", "kernel", "transpose", "void(int32[:, ::1], int32[:, ::1])"),
    ("transpose", "kernel", "tile_transpose", "void(int32[:, ::1], int32[:, ::1])"),
    ("type_widening", "kernel", "assign_constant", "void(float32[::1])"),
    ("type_widening", "kernel", "add_constant", "void(float32[::1])"),
    ("type_widening", "kernel", "add_constant_widening", "void(float32[::1], float32[::1])"),
    ("type_widening", "kernel", "add_constant_narrow", "void(float32[::1], float32[::1])"),
    ("type_widening", "kernel", "add_constant_2", "void(float32[::1], int32[::1], int32)"),
    ("type_widening", "kernel", "index_computation", "void(int32[:, ::1])"),
    ("type_widening", "kernel", "index_computation_int32", "void(int32[:, ::1])"),
    ("ufuncs", "ufunc", "gaussian_pdf", "void(float32[:], float32[:], float32[:], float32[:])"),
    ("ufuncs", "ufunc", "polar_distance", "void(float32[:], float32[:], float32[:], float32[:], float32[:])"),
    ("ufuncs", "ufunc", "add_ufunc", "void(float32[:], float32[:], float32[:])"),
    ("ufuncs", "ufunc", "add_ufunc", "void(int64[:], int64[:], int64[:])"),
    ("ufuncs", "ufunc", "rel_diff", "void(float32[:], float32[:], float32[:])"),
    ("ufuncs", "ufunc", "rel_diff", "void(float64[:], float64[:], float64[:])"),
    ("vector_add", "kernel", "add_kernel", "void(float32[::1], float32[::1], float32[::1])"),
    ("vector_add", "kernel", "add_kernel_grid", "void(float32[::1], float32[::1], float32[::1])"),
    ("vector_add", "kernel", "vector_add", "void(float32[::1], float32[::1], float32[::1])"),
    ("vector_add", "kernel", "increment_kernel", "void(int32[::1], int32)"),
]

# Kiln's default architectures: cubin arch -> the PTX target it is built from.
DEFAULT_CUBINS = {75: 75, 80: 80, 86: 86, 89: 89, 90: 90, 100: 90, 120: 90}


def examples():
    return sorted({spec[0] for spec in SPECS})


def specs_of(example):
    """(stem, kind, function, signature) of the example, stems as Kiln's."""
    counts = {}
    result = []
    for ex, kind, function, signature in SPECS:
        if ex != example:
            continue
        n = counts.get(function, 0)
        counts[function] = n + 1
        result.append((f"{function}.{n}", kind, function, signature))
    return result


class _FakeDevice:
    compute_capability = (7, 5)


def _install_patches():
    import numba.cuda.dispatcher as cuda_dispatcher

    cuda_dispatcher.get_current_device = lambda: _FakeDevice()

    def record_only(self, sig):
        return None

    def disable_compile(self, val=True):
        self._can_compile = not val

    cuda_dispatcher.CUDADispatcher.compile = record_only
    cuda_dispatcher.CUDADispatcher.disable_compile = disable_compile


def _import_example(example):
    path = ROOT / "examples" / f"{example}.py"
    name = f"kiln_bench_{example}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _resolve(module, kind, function, signature):
    """(python function, numba signature, kernel options) of one spec."""
    from numba.cuda import types

    namespace = {**vars(types), **vars(module), "void": types.void}
    sig = eval(signature, namespace)
    args = sig.args
    if kind == "kernel":
        dispatcher = getattr(module, function)
        return dispatcher.py_func, sig, dict(dispatcher.targetoptions)
    if kind == "ufunc":
        ufunc = getattr(module, function)
        from numba.cuda.np.numpy_support import as_dtype

        wanted = tuple(as_dtype(a.dtype) for a in args[:-1])
        for dtypes, (_result, kernel) in ufunc.functions.items():
            if tuple(dtypes) == wanted:
                return kernel.py_func, sig, dict(kernel.targetoptions)
        raise LookupError(f"{function} has no loop for {wanted}")
    if kind == "reduction":
        from numba.cuda.kernels.reduction import _gpu_reduce_factory

        reduction = getattr(module, function)
        kernel = _gpu_reduce_factory(reduction._functor, args[0].dtype)
        return kernel.py_func, sig, dict(kernel.targetoptions)
    raise ValueError(kind)


def _compile_options(options):
    """compile_ptx keywords for a kernel's decorator options, as Numba's dispatcher."""
    debug = bool(options.get("debug", False))
    opt = options.get("opt", True)
    return {
        "debug": debug,
        "lineinfo": bool(options.get("lineinfo", False)),
        "fastmath": bool(options.get("fastmath", False)),
        "opt": bool(opt) and not debug,
    }


def ptxas_flags(options):
    """The ptxas flags Kiln passes for these options (backend/cuda_tools/ptxas.cpp)."""
    debug = bool(options.get("debug", False))
    opt = options.get("opt", True)
    flags = ["-m64", "-O" + ("0" if debug or not opt else "3")]
    if options.get("max_registers"):
        flags.append(f"--maxrregcount={options['max_registers']}")
    if debug:
        flags.append("-g")
    elif options.get("lineinfo"):
        flags.append("-lineinfo")
    return flags


def run_ptxas(ptx_path, arch, flags, verbose=False):
    command = [str(CUDA_HOME / "bin" / "ptxas"), f"-arch=sm_{arch}", *flags]
    if verbose:
        command.append("-v")
    command += [str(ptx_path), "-o", str(ptx_path) + f".sm_{arch}.cubin"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ptxas failed on {ptx_path} for sm_{arch}:\n{done.stderr}")
    return done.stdout + done.stderr


def _setup(example):
    import numba  # noqa: F401
    import numba.cuda  # noqa: F401

    t_numba = time.perf_counter()
    _install_patches()
    module = _import_example(example)
    t_example = time.perf_counter()
    specs = []
    for stem, kind, function, signature in specs_of(example):
        pyfunc, sig, options = _resolve(module, kind, function, signature)
        specs.append((stem, pyfunc, sig, options))
    return specs, t_numba, t_example


def compile_for_default_archs(specs):
    """compile_ptx for every PTX target Kiln compiles and ptxas for every
    cubin of Kiln's default list, for (stem, pyfunc, sig, options) specs."""
    from numba import cuda

    cubins = DEFAULT_CUBINS
    ptx_archs = sorted(set(cubins.values()))
    work = tempfile.TemporaryDirectory(prefix="kiln-bench-numba-")
    t_begin = time.perf_counter()
    compile_s = 0.0
    ptxas_s = 0.0
    first = None
    cold = None
    refused = []
    for arch in ptx_archs:
        for stem, pyfunc, sig, kernel_options in specs:
            start = time.perf_counter()
            try:
                ptx, _ = cuda.compile_ptx(pyfunc, sig, cc=divmod(arch, 10), **_compile_options(kernel_options))
            except Exception as error:  # noqa: BLE001 - report, don't stop
                refused.append(f"{stem} sm_{arch}: {type(error).__name__}: {error}")
                continue
            compile_s += time.perf_counter() - start
            path = pathlib.Path(work.name) / f"{stem}.sm_{arch}.ptx"
            path.write_text(ptx)
            for cubin, source in cubins.items():
                if source != arch:
                    continue
                start = time.perf_counter()
                run_ptxas(path, cubin, ptxas_flags(kernel_options))
                ptxas_s += time.perf_counter() - start
            if first is None:
                first = time.perf_counter() - t_begin
        if arch == ptx_archs[0]:
            cold = time.perf_counter() - t_begin
    return {
        "specializations": len(specs),
        "cubin_archs": len(cubins),
        "ptx_targets": len(ptx_archs),
        "first_spec_first_arch_s": first,
        "first_arch_all_specs_s": cold,
        "compile_ptx_s": compile_s,
        "ptxas_s": ptxas_s,
        "total_s": time.perf_counter() - t_begin,
        "refused": refused,
    }


def command_compile(options):
    specs, t_numba, t_example = _setup(options.example)
    result = compile_for_default_archs(specs)
    print(json.dumps({"example": options.example, "import_numba_s": t_numba - _T0,
                      "import_example_s": t_example - t_numba, **result}))


def command_module(options):
    """Every @cuda.jit kernel of a module file, with one signature for all."""
    import numba  # noqa: F401
    import numba.cuda  # noqa: F401
    from numba import types  # noqa: F401

    t_numba = time.perf_counter()
    _install_patches()
    spec = importlib.util.spec_from_file_location("kiln_bench_module", options.path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import numba.cuda.dispatcher as cuda_dispatcher

    signature = eval(options.signature, vars(numba))  # noqa: S307 - a signature from our own scripts
    specs = [(f"{name}.0", value.py_func, signature, {}) for name, value in vars(module).items()
             if isinstance(value, cuda_dispatcher.CUDADispatcher)]
    result = compile_for_default_archs(specs)
    print(json.dumps({"module": str(options.path), "import_numba_s": t_numba - _T0, **result}))


def command_ptx(options):
    from numba import cuda

    specs, _, _ = _setup(options.example)
    out = pathlib.Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    listing = []
    for stem, pyfunc, sig, kernel_options in specs:
        entry = {"stem": stem, "ptxas_flags": ptxas_flags(kernel_options), "ptx": {}, "refused": {}}
        for arch in (int(a) for a in options.ptx_archs.split(",")):
            try:
                ptx, _ = cuda.compile_ptx(pyfunc, sig, cc=divmod(arch, 10), **_compile_options(kernel_options))
            except Exception as error:  # noqa: BLE001
                entry["refused"][str(arch)] = f"{type(error).__name__}: {error}"
                continue
            path = out / f"{stem}.sm_{arch}.ptx"
            path.write_text(ptx)
            entry["ptx"][str(arch)] = str(path)
        listing.append(entry)
    print(json.dumps(listing))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    compile_parser = sub.add_parser("compile")
    compile_parser.add_argument("example")
    module_parser = sub.add_parser("module")
    module_parser.add_argument("path")
    module_parser.add_argument("--signature", required=True)
    ptx_parser = sub.add_parser("ptx")
    ptx_parser.add_argument("example")
    ptx_parser.add_argument("--ptx-archs", default="75,80,90")
    ptx_parser.add_argument("--out", required=True)
    options = parser.parse_args()
    sys.dont_write_bytecode = True  # keep __pycache__ out of examples/
    {"compile": command_compile, "module": command_module, "ptx": command_ptx}[options.command](options)


if __name__ == "__main__":
    main()
