"""Registers and spills, Kiln against Numba, on numba-cuda's own kernels.

Every kernel specialization of numba-cuda's test folder
(`numba/cuda/tests/cudapy/`) that both compilers build is a pair.

Goal: Kiln no worse than Numba on any pair.

    .venv/bin/python bench/register_pairs.py [--files test_laplace,...] [--jobs N]
                                             [--archs 80,90] [--json FILE] [--out DIR]

Finding the kernels. The conformance tier's build sweep does it
(tests/conformance/kernel_sweep.py): each test file runs in a process of
its own on Numba's CUDA simulator with Kiln standing in for its compiler
(run_module.py --kiln), which records every kernel the tests make and every
specialization they launch, then builds each with Kiln. The usecase
modules no test file is named after are swept alone (run_module.py
--sweep-only), as run_suite.py does. A kernel several files make (a usecase
module's) counts once: paired if any file paired it, else for the first
file in alphabetical order.

Kiln's side. For every kernel specialization Kiln builds, Kiln's PTX for
each architecture comes from `kiln._compiler.inspect`, called as the lazy
kernel's `inspect_asm` calls it, with the architecture given.

Numba's side. The simulator's process has no compiler of Numba's, so each
kernel is transplanted into a process that runs the real numba.cuda: its
Python function is pickled with Numba's cloudpickle, the test modules' code
by value (most of them need a GPU to import); the Kiln device functions and
kernels it reaches are rebuilt there as `numba.cuda.jit` makes them, with
the signatures and options the test gave, and the simulator's objects
become what their names are in the real numba.cuda. A specialization the
tests launched is given Numba's types of the launch's arguments, a kernel
given signatures those signatures. What no transplant can give (names the
simulator leaves unbound, functions Numba knows by identity: overloads)
comes from the kernel's module, imported there (with_module_globals).
`numba.cuda.compile_ptx` then compiles each signature for each
architecture, with the kernel's options; a kernel that calls functions
Numba links in from CUDA C (float16 operations, reshape) is linked with
them as Numba links it (link_time_ptx). No GPU is needed: a device function
given signatures compiles when it is made, for the current device, which
is a stub whose compute capability is the architecture compiled for (as in
bench/numba_side.py).

A pair is one specialization on one architecture, both sides' PTX run
through `ptxas -arch=sm_XX -v` with the flags Kiln passes for the kernel's
options (numba_side.ptxas_flags: -m64 -O3, -O0 for opt=False,
--maxrregcount for max_registers=, -lineinfo). Kernels compiled with
debug=True are left out. Signatures are matched by name as Numba prints
types; a kernel with one signature on each side pairs whatever the names
(they are then both kept). A specialization Kiln built that gives no pair
(it does not pickle or transplant, Numba or ptxas refuses it) is counted by
reason. Both sides' PTX is kept in bench/out/register_pairs/{kiln,numba}/
FILE/ for reading. Kiln's Python package is copied first, so that a rebuild
during the run cannot mix two builds.
"""

import argparse
import builtins
import collections
import concurrent.futures
import contextlib
import dis
import importlib.util
import io
import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import types

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402
from numba_side import _compile_options, ptxas_flags  # noqa: E402
from register_usage import ptxas_usage  # noqa: E402

CONFORMANCE = bc.ROOT / "tests" / "conformance"
OUT = bc.BENCH / "out" / "register_pairs"
TESTS_PACKAGE = "numba.cuda.tests.cudapy"
# Each test file's processes (the simulator's, Numba's) are stopped after this.
PROCESS_TIMEOUT_S = 900


# --- In the simulator's process: the kernels, Kiln's PTX, the transplants -----

class NotTransplantable(Exception):
    """A kernel reaches something the real numba.cuda cannot be given."""


# The functions a transplant calls in Numba's process (numba_device_function,
# numba_kernel, numba_cuda_object and what they call) travel by value, as
# cloudpickle sends functions of __main__; they import Numba there, where
# it is the real one.


def numba_device_function(py_func, signatures, options):
    """In Numba's process: the device function a Kiln one stands for."""
    from numba import cuda

    return cuda.jit(signatures or None, device=True, **options)(with_module_globals(py_func))


def numba_kernel(py_func, options):
    """In Numba's process: the kernel a Kiln one (reached from a kernel) stands for."""
    from numba import cuda

    return cuda.jit(**options)(with_module_globals(py_func))


def with_module_globals(py_func):
    """In Numba's process: `py_func` (of a test module, pickled by value)
    with the globals no transplant can give it taken from its module,
    imported here: the names the simulator's run of the module left unbound
    (test_bfloat16_bindings imports its bf16 functions only off the
    simulator), and the module's plain Python functions, which Numba can
    call only as the functions it overloads (test_overload's), known by
    identity. Most test modules need a GPU to import: they are imported
    only where needed."""
    module_name = py_func.__module__ or ""
    if not module_name.startswith(f"{TESTS_PACKAGE}."):
        return py_func
    namespace = py_func.__globals__
    codes, names = [py_func.__code__], set()
    while codes:
        code = codes.pop()
        names.update(instruction.argval for instruction in dis.get_instructions(code)
                     if instruction.opname == "LOAD_GLOBAL")
        codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
    needed = [name for name in names
              if (name not in namespace and not hasattr(builtins, name))
              or (isinstance(namespace.get(name), types.FunctionType)
                  and namespace[name].__module__ == module_name)]
    if needed:
        module = importlib.import_module(module_name)
        namespace.update({name: getattr(module, name) for name in needed if hasattr(module, name)})
    return py_func


def numba_cuda_object(module_name, attribute):
    """In Numba's process: what `module_name.attribute` names in the real
    numba.cuda (the module itself for attribute None)."""
    module = importlib.import_module(module_name)
    return module if attribute is None else getattr(module, attribute)


def from_the_simulator(value):
    """Whether a value is one of the simulator's modules, or was made by one."""
    name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    return isinstance(name, str) and name.startswith("numba.cuda.simulator")


def simulator_counterparts():
    """{id: (module, attribute)} of the simulator's modules and objects that
    numba.cuda's modules name, where their names are the real ones'."""
    found = {}
    for module_name, module in list(sys.modules.items()):
        if (not module_name.startswith("numba.cuda") or module_name.startswith("numba.cuda.simulator")
                or module_name.startswith(TESTS_PACKAGE) or module is None):
            continue
        if from_the_simulator(module):
            found.setdefault(id(module), (module_name, None))
        for attribute, value in list(vars(module).items()):
            if from_the_simulator(value) and not isinstance(value, types.ModuleType):
                found.setdefault(id(value), (module_name, attribute))
    return found


def recorded_jit_calls(stand_in):
    """Wraps the stand-in's `numba.cuda.jit` to keep, for every device
    function it makes, the signatures and options it was given (Kiln's
    device functions keep neither): {id: (device function, signatures, options)}."""
    from numba import cuda

    calls = {}
    stand_in_jit = cuda.jit

    def note(made, func_or_sig, options):
        if isinstance(made, stand_in._StandInDeviceFunction):
            # The device function is kept too, so that its id is never another's.
            calls[id(made)] = (made, stand_in.signatures_given(func_or_sig), options)
        return made

    def jit(func_or_sig=None, device=False, **options):
        made = stand_in_jit(func_or_sig, device=device, **options)
        if isinstance(made, (stand_in.StandInKernel, stand_in._StandInDeviceFunction)):
            return note(made, func_or_sig, options)
        return lambda py_func: note(made(py_func), func_or_sig, options)  # made is the decorator

    cuda.jit = jit
    return calls


def transplant_pickler(jit_calls, counterparts):
    """A cloudpickle Pickler class that writes a kernel's Python function
    for Numba's process: Kiln's device functions and kernels rebuilt with
    numba.cuda.jit there, the simulator's objects as the real numba.cuda's,
    the test modules' code by value."""
    from numba import cloudpickle
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    from kiln.decorators import DeclaredDeviceFunction
    from kiln.dispatcher import DeviceFunction, LazyKernel

    cloudpickle.register_pickle_by_value(sys.modules[TESTS_PACKAGE])

    class TransplantPickler(cloudpickle.Pickler):
        def reducer_override(self, obj):
            if isinstance(obj, DeviceFunction):
                if id(obj) not in jit_calls:
                    raise NotTransplantable("reaches a device function numba.cuda.jit did not make")
                _, signatures, options = jit_calls[id(obj)]
                return numba_device_function, (obj.py_func, signatures, options)
            if isinstance(obj, LazyKernel):  # the stand-in's kernels say they are
                return numba_kernel, (obj.py_func, obj.options)
            if isinstance(obj, FakeCUDAArray):
                raise NotTransplantable("captures a device array")
            if isinstance(obj, DeclaredDeviceFunction):
                raise NotTransplantable("calls a cuda.declare_device function (linked code)")
            if from_the_simulator(obj):
                if id(obj) not in counterparts:
                    raise NotTransplantable("reaches a simulator object numba.cuda does not name")
                return numba_cuda_object, counterparts[id(obj)]
            return super().reducer_override(obj)

    return TransplantPickler


def kiln_ptx(kernel, signature, arch):
    """{signature: PTX} of a stand-in kernel for one architecture, as
    Kernel._inspect asks kiln._compiler: for `signature`, else for the
    signatures its decorator gave. Signatures are spelled as Numba prints
    argument types: "(array(float32, 1d, C), int64)"."""
    from kiln import _compiler

    lazy = kernel.kiln_kernel
    builds = lazy._builds
    asked = [] if signature is None else [f"{lazy.built_name}={signature}"]
    with tempfile.TemporaryDirectory(prefix="kiln-inspect-") as folder:
        rows = _compiler.inspect(builds.path, "ptx", folder, module_name=builds.module_name, arch=str(arch),
                                 signatures=asked, module_stays_python=True,
                                 host_values=builds.live_host_values(), closures=builds.closure_requests(),
                                 decorator_calls=builds.decorator_calls(), functions=[lazy.built_name])
    return {"(" + ", ".join(args) + ")": ptx for (name, args, _), ptx in rows if name == lazy.built_name}


def one_line(error):
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:300]


def lost(reason, error):
    """A loss (reason, detail) for an exception: the reason names its type."""
    return [f"{reason}: {type(error).__name__}", one_line(error)]


class Collector:
    """For each kernel specialization Kiln built: Kiln's PTX per
    architecture (written under `kiln_out`), and the kernel's transplant
    for Numba's process; appends a JSON line per kernel to `listing` and
    the transplants to `transplants` (pickled (index, bytes) records)."""

    def __init__(self, archs, kiln_out, listing, transplants, pickler):
        self.archs = archs
        self.kiln_out = kiln_out
        self.listing = listing
        self.transplants = transplants
        self.pickler = pickler
        self.count = 0

    def collect(self, item, numba_argument_types):
        """`numba_argument_types`: for a specialization, Numba's types of
        the arguments it was launched with, if Numba has types for them."""
        kernel = item.made
        options = dict(kernel.options)
        index = self.count
        self.count += 1
        entry = {"key": item.key, "kernel": item.name, "ptxas_flags": ptxas_flags(options), "transplant": index,
                 "kiln": {}}
        try:
            for arch in self.archs:
                for signature, ptx in kiln_ptx(kernel, item.signature, arch).items():
                    paths = entry["kiln"].setdefault(signature, {})
                    # Numbered: built names repeat (the kernels exec makes of one text).
                    number = list(entry["kiln"]).index(signature)
                    path = self.kiln_out / f"{kernel.kiln_kernel.built_name}.{index}.{number}.sm_{arch}.ptx"
                    path.write_text(ptx)
                    paths[str(arch)] = str(path)
        except Exception as error:  # a kernel Kiln built but cannot show: a loss, not the end of the run
            entry["loss"] = lost("Kiln's inspect failed", error)
        else:
            entry["loss"] = self._numba_side(entry, item, options, numba_argument_types)
        self.listing.write(json.dumps(entry) + "\n")
        self.listing.flush()

    def _numba_side(self, entry, item, options, numba_argument_types):
        """Prepares the kernel for Numba's process: its compile options, its
        transplant; the reason it gives no pair, or None."""
        if not entry["kiln"]:
            return ["Kiln's inspect gave no PTX for it", ""]
        if options.get("debug"):
            return ["debug=True: compiled for debugging, not compared", ""]
        entry["compile_options"] = _compile_options(options)
        if options.get("launch_bounds"):
            entry["compile_options"]["launch_bounds"] = options["launch_bounds"]
        signatures = (list(item.made.kiln_kernel._declared) if item.signature is None
                      else [numba_argument_types or item.signature])
        return self._transplant(entry["transplant"], item.made.py_func, signatures)

    def _transplant(self, index, py_func, signatures):
        """Pickles (Python function, signatures) for Numba's process; the
        reason it cannot, or None."""
        buffer = io.BytesIO()
        try:
            self.pickler(buffer).dump((py_func, signatures))
        except NotTransplantable as error:
            return [f"not transplantable: {error}", ""]
        except Exception as error:  # what cloudpickle cannot write (a lock, a generator ...)
            return lost("does not pickle", error)
        pickle.dump((index, buffer.getvalue()), self.transplants)
        self.transplants.flush()
        return None


def collect(name, work, archs):
    """The simulator's process of one test file (or usecase module): its
    tests with Kiln standing in and the build sweep, each kernel Kiln
    builds collected (Collector)."""
    sys.path.insert(0, str(CONFORMANCE))
    import run_module

    stand_in = run_module.stand_in_kiln()
    import kernel_sweep
    import numba

    jit_calls = recorded_jit_calls(stand_in)

    class PairingSweep(kernel_sweep.Sweep):
        """The sweep, collecting each kernel as soon as Kiln built it (a
        build that crashes the process loses only the kernels after it)."""

        def __init__(self, log):
            super().__init__(log)
            self.numba_argument_types = {}  # item key -> Numba's types of its launch's arguments

        def build_all(self):
            # The builds start once the tests have imported every module
            # whose simulator objects a kernel may name.
            self.collector = Collector(archs, kiln_out, listing, transplants,
                                       transplant_pickler(jit_calls, simulator_counterparts()))
            super().build_all()

        def launched(self, kernel, args):
            """Also keeps the Numba types of the arguments of the launch
            that makes a specialization an item: Kiln's signature text
            loses what Numba's typeof gives (a record array's alignment)."""
            before = set(self.items)
            super().launched(kernel, args)
            for key in set(self.items) - before:
                with contextlib.suppress(Exception):  # Numba has no type for it: Kiln's text is used
                    self.numba_argument_types[key] = tuple(map(numba.typeof, args))

        def _build(self, item):
            outcome, detail = super()._build(item)
            if outcome == "built" and item.kind != "device function":
                self.collector.collect(item, self.numba_argument_types.get(item.key))
            return outcome, detail

    kiln_out = work / "kiln-ptx"
    kiln_out.mkdir()
    module_name = f"{run_module.PACKAGE}.{name}"
    with contextlib.ExitStack() as files:
        listing = files.enter_context(open(work / f"{name}.kernels.jsonl", "w"))
        transplants = files.enter_context(open(work / f"{name}.transplants.pickle", "wb"))
        log = files.enter_context(open(work / f"{name}.builds.jsonl", "w"))
        sweep = PairingSweep(log)
        stand_in.made_hook = sweep.made
        if name.startswith("test_"):
            run_module.run_on_kiln(module_name, str(work / f"{name}.tests.jsonl"), stand_in, None, sweep)
        else:
            run_module.sweep_only(module_name, sweep)


# --- In Numba's process: compile_ptx of each transplant -----------------------

class StubDevice:
    """The current device of Numba's process, which has no GPU."""

    compute_capability = (8, 0)


def numba_side(name, work, archs):
    """Compiles every transplant of `name` for every architecture, writing
    one JSON line per signature and architecture (a "started" line before
    each transplant: one without results is where the process died). The
    transplants already done (listed in the results) are skipped."""
    import numba.cuda.dispatcher as cuda_dispatcher

    device = StubDevice()
    cuda_dispatcher.get_current_device = lambda: device
    results_path = work / f"{name}.numba.jsonl"
    done = {line["transplant"] for line in read_lines(results_path)}
    options_of = {entry["transplant"]: entry.get("compile_options", {})
                  for entry in read_lines(work / f"{name}.kernels.jsonl")}
    numba_out = work / "numba-ptx"
    numba_out.mkdir(exist_ok=True)
    with open(work / f"{name}.transplants.pickle", "rb") as transplants, open(results_path, "a") as results:
        def write(fields):
            results.write(json.dumps(fields) + "\n")
            results.flush()

        for index, blob in pickled_records(transplants):
            if index in done:
                continue
            write({"transplant": index, "event": "started"})
            for arch in archs:
                device.compute_capability = divmod(arch, 10)
                for result in compile_transplant(blob, arch, options_of[index], numba_out / str(index)):
                    write({"transplant": index, "arch": arch, **result})


def compile_transplant(blob, arch, options, ptx_stem):
    """Numba's PTX of one transplant for one architecture: yields for each
    signature {"signature": Numba's name of it, "ptx": the PTX file's path,
    "linked": whether link_time_ptx made it}, or {"signature", "loss":
    (reason, detail)}; a signature of None where Numba got no name."""
    from numba import cuda
    from numba.cuda.core import sigutils

    cc = divmod(arch, 10)
    try:  # afresh for each architecture: device functions compile as they are made
        py_func, signatures = pickle.loads(blob)
        with_module_globals(py_func)
    except Exception as error:
        yield {"signature": None, "loss": lost("does not unpickle in Numba's process", error)}
        return
    for number, signature in enumerate(signatures):
        try:
            spelled = "(" + ", ".join(map(str, sigutils.normalize_signature(signature)[0])) + ")"
        except Exception as error:
            yield {"signature": None, "loss": lost("Numba cannot read the signature", error)}
            continue
        try:
            ptx, _ = cuda.compile_ptx(py_func, signature, cc=cc, **options)
        except Exception as error:
            yield {"signature": spelled, "loss": lost("Numba refused", error)}
            continue
        linked = ".extern .func" in ptx  # it calls code Numba links in
        if linked:
            try:
                ptx = link_time_ptx(py_func, signature, cc, options, ptx)
            except Exception as error:
                yield {"signature": spelled, "loss": lost("Numba's link-time PTX failed", error)}
                continue
        path = pathlib.Path(f"{ptx_stem}.{number}.sm_{arch}.ptx")
        path.write_text(ptx)
        yield {"signature": spelled, "ptx": str(path), "linked": linked}


def link_time_ptx(py_func, signature, cc, options, unlinked_ptx):
    """Numba's PTX of a kernel that calls functions Numba links in from
    CUDA C (its float16 operations; array reshape, which Numba's _Kernel
    links where its PTX, `unlinked_ptx`, calls it): the kernel's LTO-IR and
    theirs (compile_all), linked by nvJitLink into one PTX with link-time
    optimization, as CUDACodeLibrary.get_lto_ptx links them; no GPU needed.
    Functions of static libraries (cudadevrt's) stay unresolved."""
    from numba import cuda
    from numba.cuda import dispatcher
    from numba.cuda.cudadrv import driver

    codes, _ = cuda.compile_all(py_func, signature, device=False, abi="numba", cc=cc, output="ltoir", **options)
    linker = driver._Linker(cc=cc, additional_flags=["-ptx"], lto=True)
    for code in codes:
        linker.add_ltoir(code if isinstance(code, bytes) else code.code)  # NVRTC's output is an ObjectCode
    if any(function in unlinked_ptx for function in dispatcher.reshape_funcs):
        linker.add_file_guess_ext(os.path.join(os.path.dirname(dispatcher.__file__), "reshape_funcs.cu"),
                                  ignore_nonlto=True)
    return linker.get_linked_ptx().decode().rstrip("\0")


def pickled_records(file):
    while True:
        try:
            yield pickle.load(file)
        except EOFError:
            return


def read_lines(path):
    path = pathlib.Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- The driver: both processes per file, then ptxas on each pair ------------

def suite_files():
    """The test files and usecase modules of the cudapy folder."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # find_spec imports numba.cuda: the simulator's is light
    folder = pathlib.Path(importlib.util.find_spec(TESTS_PACKAGE).origin).parent
    return {path.stem: path for path in folder.glob("*.py") if not path.stem.startswith("__")}


def run_step(step, name, work, archs, env):
    """Runs one process of a file's; None if it ended well, else how it ended."""
    command = [sys.executable, __file__, step, name, "--work", str(work), "--archs", ",".join(map(str, archs))]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=PROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"timed out after {PROCESS_TIMEOUT_S} s"
    if done.returncode == 0:
        return None
    tail = [line for line in done.stderr.splitlines() if line.strip()][-1:] or [""]
    return f"exit status {done.returncode}: {tail[0][:200]}"


def run_numba_side(name, work, archs):
    """Numba's process for the file, started again past a transplant that
    killed it (that one is a loss). Returns {transplant: [result lines]}."""
    env = bc.bench_env()
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    died = {}
    while True:
        ended = run_step("numba-side", name, work, archs, env)
        lines = read_lines(work / f"{name}.numba.jsonl")
        started = [line["transplant"] for line in lines if line.get("event") == "started"]
        finished = {line["transplant"] for line in lines if "event" not in line}
        if ended is None or not started or started[-1] in finished or started[-1] in died:
            break
        died[started[-1]] = ended
        with open(work / f"{name}.numba.jsonl", "a") as results:
            for arch in archs:
                results.write(json.dumps({"transplant": started[-1], "arch": arch, "signature": None,
                                          "loss": ["Numba's process died", ended]}) + "\n")
    by_transplant = collections.defaultdict(list)
    for line in read_lines(work / f"{name}.numba.jsonl"):
        if "event" not in line:
            by_transplant[line["transplant"]].append(line)
    return by_transplant, ended


def pair_file(name, work, archs, out, build):
    """Both processes for one file, then ptxas on both sides of each pair:
    {"pairs": [...], "losses": [...], "ended": how a process ended early}."""
    env = bc.bench_env(NUMBA_ENABLE_CUDASIM="1", KILN_TARGET="cpu", KILN_CACHE_DIR=str(work / "cache"),
                       KILN_BUILD_DIR=str(build))
    collected = run_step("collect", name, work, archs, env)
    entries = read_lines(work / f"{name}.kernels.jsonl")
    numba_results, numba_ended = run_numba_side(name, work, archs) if entries else ({}, None)
    kept = {side: out / side / name for side in ("kiln", "numba")}
    for folder in kept.values():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    pairs, losses = [], []
    for entry in entries:
        results = numba_results.get(entry["transplant"], [])
        # A kernel lost before Kiln showed its PTX counts once per architecture.
        for signature, kiln_paths in (entry["kiln"] or {None: {}}).items():
            for arch in archs:
                record = {"file": name, "kernel": entry["kernel"], "key": entry["key"], "signature": signature,
                          "arch": arch}
                numba = ({"loss": entry["loss"]} if entry.get("loss") else
                         numba_result(results, signature, arch, len(entry["kiln"]) == 1, numba_ended))
                if "loss" in numba:
                    losses.append(dict(record, reason=numba["loss"][0], detail=numba["loss"][1]))
                    continue
                measured = measure(record, kiln_paths[str(arch)], numba, entry["ptxas_flags"], kept)
                (losses if "reason" in measured else pairs).append(measured)
    refused = [event["key"] for event in read_lines(work / f"{name}.builds.jsonl")
               if event["event"] == "ended" and event["kind"] != "device function" and event["outcome"] != "built"]
    return {"pairs": pairs, "losses": losses, "kiln_refused": refused, "ended": collected or numba_ended}


def numba_result(results, signature, arch, only_one, numba_ended):
    """Numba's result line for one specialization on one architecture: its
    PTX, or its "loss" (reason, detail). The signatures are matched by
    name, or, where the kernel has only one, are the same specialization
    whatever each compiler calls its types (then "signature" says Numba's
    name)."""
    if not results:
        return {"loss": ["Numba's process gave nothing for it", numba_ended or ""]}
    at_arch = [line for line in results if line["arch"] == arch]
    named = [line for line in at_arch if line["signature"] == signature]
    if named:
        return named[0]
    unread = [line for line in at_arch if line["signature"] is None]
    if unread:
        return unread[0]
    if only_one and len(at_arch) == 1:
        return at_arch[0]
    spelled = ", ".join(line["signature"] for line in at_arch) or "nothing"
    return {"loss": ["no signature of Numba's has Kiln's name", f"Numba compiled {spelled}"]}


def measure(record, kiln_ptx, numba, ptxas_flags, kept):
    """The pair record with both sides' ptxas usage, or the loss record if
    ptxas refuses a side's PTX. Both sides' PTX is kept, in the folders
    `kept` gives each side, under the name Kiln's has."""
    name = pathlib.Path(kiln_ptx).name
    for side, ptx in (("kiln", kiln_ptx), ("numba", numba["ptx"])):
        record[f"{side}_ptx"] = str(shutil.copy(ptx, kept[side] / name))
    if numba["signature"] != record["signature"]:
        record["numba_signature"] = numba["signature"]
    record["numba_linked"] = numba["linked"]
    usage = {}
    for side in ("kiln", "numba"):
        try:
            usage[side] = ptxas_usage(record[f"{side}_ptx"], record["arch"], ptxas_flags)._asdict()
        except RuntimeError as error:
            owner = {"kiln": "Kiln", "numba": "Numba"}[side]
            return dict(record, reason=f"ptxas refused {owner}'s PTX", detail=ptxas_error(error))
    return dict(record, **usage)


def ptxas_error(error):
    lines = [line for line in str(error).splitlines()[1:] if line.strip()]
    return (lines[0] if lines else str(error))[:300]


def timed_pair_file(name, archs, scratch, out):
    work = pathlib.Path(scratch) / name
    work.mkdir()
    started = time.perf_counter()
    result = pair_file(name, work, archs, out, pathlib.Path(scratch) / "kiln-build")
    print(f"  {name}: {len(result['pairs'])} pairs, {len(result['losses'])} losses, "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return result


def first_of_each(pairs, losses):
    """Each specialization once per architecture (a usecase module's kernel
    several files make counts for the first file), pairs before losses."""
    seen = set()
    kept = {"pairs": [], "losses": []}
    for kind, records in (("pairs", pairs), ("losses", losses)):
        for record in sorted(records, key=lambda r: r["file"]):
            identity = (record["key"], record["signature"], record["arch"])
            if identity not in seen:
                seen.add(identity)
                kept[kind].append(record)
    return kept["pairs"], kept["losses"]


def spills(usage):
    return usage["spill_stores"] + usage["spill_loads"]


def arch_summary(pairs):
    excess = [pair["kiln"]["registers"] - pair["numba"]["registers"] for pair in pairs]
    at_most = sum(1 for delta in excess if delta <= 0)
    return {"pairs": len(pairs), "kiln_at_most_numba": at_most,
            "kiln_at_most_numba_percent": round(100.0 * at_most / len(pairs), 1) if pairs else None,
            "kiln_more": sum(1 for delta in excess if delta > 0),
            "kiln_fewer": sum(1 for delta in excess if delta < 0),
            "max_excess": max(excess, default=0),
            "kiln_spills_more": sum(1 for pair in pairs if spills(pair["kiln"]) > spills(pair["numba"])),
            "numba_spills_more": sum(1 for pair in pairs if spills(pair["numba"]) > spills(pair["kiln"]))}


def report(archs, pairs, losses, kiln_refused, ended, seconds, out):
    """The Markdown report, and the summary for the JSON file."""
    summary = {}
    for arch in archs:
        summary[str(arch)] = arch_summary([pair for pair in pairs if pair["arch"] == arch])
        summary[str(arch)]["not_paired"] = sum(1 for loss in losses if loss["arch"] == arch)
    rows = [[f"sm_{arch}", s["pairs"], s["not_paired"],
             f"{s['kiln_at_most_numba']} ({s['kiln_at_most_numba_percent']}%)", s["kiln_fewer"], s["kiln_more"],
             f"+{s['max_excess']}" if s["max_excess"] > 0 else s["max_excess"], s["kiln_spills_more"],
             s["numba_spills_more"]]
            for arch, s in ((arch, summary[str(arch)]) for arch in archs)]
    print("Registers of every kernel specialization both compilers build:\n")
    print(bc.table(["arch", "pairs", "Kiln built, not paired", "Kiln ≤ Numba", "Kiln fewer", "Kiln more",
                    "largest excess", "Kiln spills more", "Numba spills more"], rows))
    renamed = sum(1 for pair in pairs if "numba_signature" in pair)
    linked = sum(1 for pair in pairs if pair["numba_linked"])
    print(f"\nNumba's PTX of {linked} pairs is linked with the CUDA C functions it calls (link_time_ptx). "
          f"{renamed} pairs are one specialization the two compilers name differently (Kiln's name below, "
          f"Numba's as numba_signature in the JSON). Kiln refused {len(kiln_refused)} kernels and "
          "specializations the tests make: no pairs.")
    reasons = collections.Counter(loss["reason"] for loss in losses)
    print(f"\nKiln built, not paired ({len(losses)} specialization×arch), by reason:\n")
    print(bc.table(["reason", "count", "example"],
                   [[reason, count, example_of(losses, reason)] for reason, count in reasons.most_common()]
                   or [["none", 0, ""]], "lrl"))
    if ended:
        print("\nFiles whose processes ended early (their later kernels are missing): "
              + "; ".join(f"{name}: {how}" for name, how in sorted(ended.items())))
    worse = sorted((pair for pair in pairs if pair["kiln"]["registers"] > pair["numba"]["registers"]),
                   key=lambda p: (p["numba"]["registers"] - p["kiln"]["registers"], p["file"], p["kernel"]))
    print(f"\nEvery pair where Kiln uses more registers ({len(worse)}), largest excess first:\n")
    print(bc.table(["kernel", "file", "signature", "arch", "Kiln / Numba regs", "spill st+ld (B) Kiln / Numba"],
                   [[pair["kernel"], pair["file"], pair["signature"], f"sm_{pair['arch']}",
                     f"{pair['kiln']['registers']} / {pair['numba']['registers']} "
                     f"**+{pair['kiln']['registers'] - pair['numba']['registers']}**",
                     f"{spills(pair['kiln'])} / {spills(pair['numba'])}"] for pair in worse], "llllrr"))
    spilling = [pair for pair in pairs if spills(pair["kiln"]) > spills(pair["numba"])]
    if spilling:
        print("\nPairs where Kiln spills more: " + "; ".join(
            f"{p['kernel']} {p['signature']} sm_{p['arch']} ({spills(p['kiln'])} / {spills(p['numba'])} B)"
            for p in spilling))
    shown = out.relative_to(bc.ROOT) if out.resolve().is_relative_to(bc.ROOT) else out
    print(f"\nPTX kept in {shown}/{{kiln,numba}}/FILE/; {seconds:.0f} s")
    return summary, dict(reasons)


def example_of(losses, reason):
    loss = next(loss for loss in losses if loss["reason"] == reason)
    detail = f": {loss['detail'][:120]}" if loss["detail"] else ""
    return f"{loss['kernel']} ({loss['file']}){detail}".replace("|", "\\|")


def run_bench(options):
    archs = [int(arch) for arch in options.archs.split(",")]
    available = suite_files()
    names = options.files.split(",") if options.files else list(available)
    unknown = [name for name in names if name not in available]
    if unknown:
        raise SystemExit(f"not in {TESTS_PACKAGE}: {', '.join(unknown)}")
    # The biggest files first, so that the longest do not start last.
    names.sort(key=lambda name: -available[name].stat().st_size)
    print(f"command: {bc.command_line()}")
    print(f"machine: {bc.machine_line()}; load average {bc.load_average()} at start\n")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kiln-register-pairs-") as scratch:
        # A private copy of Kiln's Python package and its compiler, so that
        # a rebuild during the run cannot mix two builds (bc.snapshot).
        shutil.copytree(bc.default_build_dir() / "python", pathlib.Path(scratch) / "kiln-build" / "python",
                        ignore=shutil.ignore_patterns("__pycache__"))
        with concurrent.futures.ThreadPoolExecutor(max(1, options.jobs)) as pool:
            results = dict(zip(names, pool.map(lambda name: timed_pair_file(name, archs, scratch, options.out), names)))
    seconds = time.perf_counter() - started
    pairs, losses = first_of_each([pair for result in results.values() for pair in result["pairs"]],
                                  [loss for result in results.values() for loss in result["losses"]])
    ended = {name: result["ended"] for name, result in results.items() if result["ended"]}
    kiln_refused = sorted({key for result in results.values() for key in result["kiln_refused"]})
    summary, reasons = report(archs, pairs, losses, kiln_refused, ended, seconds, options.out)
    bc.write_json(options.json, {"archs": archs, "files": sorted(names), "seconds": round(seconds, 1),
                                 "summary": summary, "loss_reasons": reasons, "ended_early": ended,
                                 "kiln_refused": kiln_refused, "pairs": pairs, "losses": losses})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", help="comma-separated test files or usecase modules (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files run at once")
    parser.add_argument("--archs", default="80,90", help="comma-separated sm_ numbers")
    parser.add_argument("--json", help="also write every pair and loss here")
    parser.add_argument("--out", type=pathlib.Path, default=OUT, help="keep both sides' PTX here")
    steps = parser.add_subparsers(dest="step", help="one file's processes, which the bench runs itself")
    for step in ("collect", "numba-side"):
        step_parser = steps.add_parser(step)
        step_parser.add_argument("name")
        step_parser.add_argument("--work", type=pathlib.Path, required=True)
        step_parser.add_argument("--archs", required=True)
    options = parser.parse_args()
    if options.step is None:
        run_bench(options)
        return
    archs = [int(arch) for arch in options.archs.split(",")]
    {"collect": collect, "numba-side": numba_side}[options.step](options.name, options.work, archs)


if __name__ == "__main__":
    main()
