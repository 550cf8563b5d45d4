"""Running random programs on Kiln and on Numba, and judging the results.

Each batch of programs (of one generator: programs.py, or the launch
index programs of launch_programs.py) runs

  * on Kiln twice: the batch is one kernel module, built with `kiln build
    --module` for sm_80 (so ptxas assembles every kernel) and run through
    the real runtime in a child process (so that a crash or a hang is an
    outcome rather than the end of the test), once on the CPU engine as
    users run it, with every fast path it has, and once in its reference
    mode (KILN_CPU_REFERENCE=1: each thread in turn through the kernel's
    plain thread entry, none of the fast paths); the programs of odd seeds
    form modules built with --switchable-index-checks, which also run a
    third time, without index checks (KILN_CPU_BOUNDSCHECK=0); each
    kernel's sm_80 PTX is also checked to keep a store to global memory;
  * on Numba's compiled semantics: the same program rendered as
    `@numba.njit` functions, run for every thread of the grid by the
    program's own `run_host`;
  * on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), for programs whose
    generator says the simulator judges them (`simulator_judges`).

The two Kiln runs must agree bit for bit: a fast path that changes a result
is a finding whatever Numba says. Numba's compiled semantics is the
specification: Kiln must match njit bit for bit (the programs use no
transcendental functions, so every float operation is IEEE-exact on both).
The simulator runs kernels as Python on NumPy scalars, and NumPy 2's scalar
rules (NEP 50) differ from Numba's: an int8 plus an int8 stays int8 and
wraps, where Numba computes in int64; a Python int stays a Python int and
never wraps; a float32 times a Python float stays float32. Where the
simulator disagrees with njit the program is counted as a simulator
divergence, not a finding; where the simulator and njit agree and Kiln does
not, the finding is doubly confirmed. A program that Numba itself rejects
(Numba's typing is stricter than a generator's idea of kinds, for example
uint64 mixed with int64 is float64) is counted as invalid and skipped. The
njit rendering cannot tell whether Numba accepts what only a kernel has (a
shuffle's value, say, must be a 32- or 64-bit number): where Kiln refuses a
program, Numba's CUDA compiler (`numba.cuda.compile_ptx`) decides whether
it is invalid or a finding.

A program, whatever its generator, offers the harness: `seed`,
`signature`, `launch()`, `render(name, host=False)`, `arguments()` (fresh
arguments, and the arrays the kernel writes by name), `run_host(function,
arguments)`, `coverage()` and `simulator_judges`, and may name the module
whose `generate(seed)` makes it again (`generator`), which the child
processes call.
"""

import dataclasses
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO / "build"))
KILN = os.environ.get("KILN", str(BUILD / "driver" / "kiln"))
PYTHON = sys.executable

MATCH = "match"
MISMATCH = "mismatch"
FAST_PATH_MISMATCH = "fast path differs from the reference engine"
COMPILE_ERROR = "kiln compile error"
INTERNAL_ERROR = "kiln internal error"
CRASH = "kiln crash"
HANG = "kiln hang"
LOST_STORES = "ptx lost its stores"
INVALID = "invalid (numba rejects it)"
SIMULATOR_DIVERGENCE = "simulator differs from compiled numba"
FINDINGS = (MISMATCH, FAST_PATH_MISMATCH, COMPILE_ERROR, INTERNAL_ERROR, CRASH, HANG, LOST_STORES)
# Time the njit reference may take per program, several times what it needs.
REFERENCE_SECONDS_PER_PROGRAM = 15


def _canonical_nans(array):
    """Makes every NaN in `array` (fields of records too) the one NaN."""
    if array.dtype.names:
        for name in array.dtype.names:
            _canonical_nans(array[name])
    elif array.dtype.kind == "c":
        for part in (array.real, array.imag):
            part[np.isnan(part)] = np.nan
    elif array.dtype.kind == "f":
        array[np.isnan(array)] = np.nan


def encode(array):
    """An output array as the harness compares it: its dtype and its bytes
    in hex, with every NaN made the one NaN (payloads are not semantics)."""
    # A copy of the bytes themselves: NumPy copies a record array field by
    # field, and leaves the padding between fields as it finds it.
    array = np.ascontiguousarray(array)
    array = np.frombuffer(bytearray(array.tobytes()), dtype=array.dtype).reshape(array.shape)
    _canonical_nans(array)
    return json.dumps([np.lib.format.dtype_to_descr(array.dtype), list(array.shape), array.tobytes().hex()])


def decode(text):
    descr, shape, data = json.loads(text)
    descr = [tuple(field) for field in descr] if isinstance(descr, list) else descr
    dtype = np.lib.format.descr_to_dtype(descr)
    return np.frombuffer(bytes.fromhex(data), dtype=dtype).reshape(shape)


def encoded_outputs(outputs):
    return {name: encode(array) for name, array in outputs.items()}


def generator_of(program):
    """The name of the module whose generate() makes `program` again, which
    the child processes call: the program's `generator`, else the module
    that defines its class."""
    return getattr(program, "generator", type(program).__module__)


# What writes global memory in PTX: a store, or an atomic on any state space
# but shared memory (LLVM writes `atom.global`, or `red.global` where the
# old value goes unused).
GLOBAL_WRITE = re.compile(r"\bst\.global\.|\b(atom|red)\.(?!shared\.)")


def stores_to_global_memory(ptx):
    return GLOBAL_WRITE.search(ptx) is not None


def stores_anything(program, outputs):
    """Whether the kernel wrote anything: its outputs differ from what it
    was given (a kernel may return before it stores; then its PTX rightly
    has no store)."""
    return outputs != encoded_outputs(program.arguments()[1])


HEADER = "import numpy as np\nfrom numba import cuda\n"
# numba-cuda lowers min and max of two float32 or float64 values to
# libdevice's fmin and fmax (PTX's min and max: IEEE 754-2019's
# minimumNumber and maximumNumber), where njit follows Python: a NaN
# operand gives the other, and -0.0 is below 0.0. The njit rendering calls
# cuda_min and cuda_max, which compute that for two floats and are Python's
# min and max otherwise.
HOST_HEADER = """import math
import numpy as np
from numba import njit, types as _numba_types
from numba.extending import overload


def cuda_min(a, b):
    return min(a, b)


def cuda_max(a, b):
    return max(a, b)


def _float_cast(a, b):
    \"\"\"The float type numba-cuda's fmin and fmax of a and b compute in, or None.
    An optional operand counts as its value, which Numba's templates unwrap.\"\"\"
    a, b = (t.type if isinstance(t, _numba_types.Optional) else t for t in (a, b))
    if not all(isinstance(t, _numba_types.Float) and t.bitwidth in (32, 64) for t in (a, b)):
        return None
    return np.float32 if a.bitwidth == b.bitwidth == 32 else np.float64


def _overload_as_cuda(python_function, first_wins):
    \"\"\"The typing function of cuda_min or cuda_max: for two floats, the
    first operand where `first_wins`, the NaN-ignoring answer otherwise;
    Python's function for anything else.\"\"\"
    def typer(a, b):
        cast = _float_cast(a, b)
        if cast is None:
            return lambda a, b: python_function(a, b)

        def ieee_number(a, b):
            # `* 1.0` (exact) takes an optional operand's value.
            x, y = cast(a * 1.0), cast(b * 1.0)
            if x != x:
                return y
            if y != y or first_wins(x, y):
                return x
            return y
        return ieee_number
    return typer


overload(cuda_min)(_overload_as_cuda(min, njit(lambda x, y: x < y or (x == y and math.copysign(1.0, x) < 0))))
overload(cuda_max)(_overload_as_cuda(max, njit(lambda x, y: x > y or (x == y and math.copysign(1.0, x) > 0))))
"""


def kernel_name(program):
    return f"k{program.seed}"


def module_source(programs, host=False):
    parts = [HOST_HEADER if host else HEADER]
    parts += [p.render(kernel_name(p), host) for p in programs]
    return "\n\n".join(parts)


# The child processes: each runs the kernels of one module and writes the
# outputs of each (or the error it raised) as JSON.
RUN_KERNELS = r"""
import importlib, json, sys, os
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from oracles import encoded_outputs, kernel_name
generator = importlib.import_module(sys.argv[3])
mode, module_name, seeds = sys.argv[4], sys.argv[5], json.loads(sys.argv[6])
module = importlib.import_module(module_name)
for seed in seeds:
    program = generator.generate(seed)
    arguments, outputs = program.arguments()
    try:
        function = getattr(module, kernel_name(program))
        if mode == "host":
            program.run_host(function, arguments)
        else:
            grid, block = program.launch()
            function[grid, block](*arguments)
        result = {"outputs": encoded_outputs(outputs)}
    except Exception as error:
        result = {"error": type(error).__name__ + ": " + str(error).splitlines()[0][:300]}
    print(json.dumps({str(seed): result}), flush=True)
"""


# Numba's CUDA compiler on one kernel of a module, in a child process: it
# prints why Numba refuses the kernel (its own compile errors only: any
# other failure proves nothing about the program), or nothing.
NUMBA_CUDA_COMPILE = r"""
import importlib, sys
import numba.core.errors
import numba.cuda.dispatcher
from numba import cuda


class Device:
    compute_capability = (8, 0)


# compile_ptx compiles for the compute capability it is given, but a device
# function the kernel calls asks for the current device's, which needs a
# GPU: this one answers for it.
numba.cuda.dispatcher.get_current_device = Device
sys.path.insert(0, sys.argv[1])
module = importlib.import_module(sys.argv[2])
try:
    cuda.compile_ptx(getattr(module, sys.argv[3]), sys.argv[4], cc=(8, 0))
except numba.core.errors.NumbaError as error:
    print(type(error).__name__ + ": " + " ".join(str(error).split())[:600])
"""


def undecorated_source(program):
    """The program's module with its kernel undecorated: a kernel whose
    signature is in its decorator compiles for the current device as it is
    defined."""
    name = kernel_name(program)
    return re.sub(rf"^@cuda\.jit\(.*\)\n(def {name}\()", r"\1", module_source([program]), flags=re.M)


def numba_cuda_refusal(program, directory, timeout):
    """Why Numba's CUDA compiler refuses `program`'s kernel, or None when
    it compiles it. The child gets the kernel undecorated and its signature
    apart."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "undecorated.py").write_text(undecorated_source(program))
    try:
        done = subprocess.run([PYTHON, "-c", NUMBA_CUDA_COMPILE, str(directory), "undecorated",
                               kernel_name(program), program.signature],
                              capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, PYTHONWARNINGS="ignore"))
    except subprocess.TimeoutExpired:
        return None
    return done.stdout.strip() or None


@dataclasses.dataclass
class Outcome:
    seed: int
    verdict: str
    detail: str = ""


# The ways a batch runs: the Kiln runs (the CPU engine as users run it, and
# its reference mode), and Numba's two.
KILN_RUNS = {"kiln": {}, "reference": {"KILN_CPU_REFERENCE": "1"}}
# A module built with both copies of each kernel's body (odd seeds' batches)
# also runs the copy without index checks, which must agree with the
# reference mode as the engine's fast paths must: the generated programs
# index only within bounds.
SWITCHABLE_RUNS = dict(KILN_RUNS, unchecked={"KILN_CPU_BOUNDSCHECK": "0"})


# What each run is, in a finding's words.
RUN_NAMES = {"kiln": "the engine", "reference": "the engine's reference mode",
             "unchecked": "the engine without index checks"}


def switchable_index_checks(program):
    """Whether `program`'s module is built with --switchable-index-checks:
    for every other seed, so that campaigns test the default build (one
    copy of each kernel's body) and the one with both copies alike, and a
    seed re-run alone is built as in its batch."""
    return program.seed % 2 == 1


def _run_child(directory, mode, generator, module, seeds, timeout, environment=None):
    env = dict(os.environ, PYTHONWARNINGS="ignore", KILN_TARGET="cpu", **(environment or {}))
    # The built modules import kiln: the build's, whatever the caller's path.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD / "python"), env.get("PYTHONPATH")]))
    if mode == "simulator":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    command = [PYTHON, "-c", RUN_KERNELS, str(pathlib.Path(__file__).parent), str(directory), generator,
               mode, module, json.dumps(seeds)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as expired:
        stdout = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        return parse_runs(stdout), "timeout"
    status = None if done.returncode == 0 else f"exit status {done.returncode}: {done.stderr[-500:]}"
    return parse_runs(done.stdout), status


def parse_runs(stdout):
    """The results RUN_KERNELS printed, by seed."""
    results = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            for seed, result in json.loads(line).items():
                results[int(seed)] = result
    return results


def _build(directory, name, source, timeout, flags):
    path = pathlib.Path(directory) / f"{name}.py"
    path.write_text(source)
    try:
        module = subprocess.run(
            [KILN, "build", path, "--module", name, "-o", directory, "--arch", "80", "-q", *flags],
            capture_output=True, text=True, timeout=timeout)
        if module.returncode != 0:
            return module.returncode, module.stderr, {}
        ptx = subprocess.run(
            [KILN, "build", path, "--emit", "ptx", "--arch", "80", "-o", pathlib.Path(directory) / "ptx", "-q"],
            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "kiln build timed out", {}
    texts = {}
    for file in (pathlib.Path(directory) / "ptx").glob("*.ptx"):
        texts[file.name.split(".")[0]] = file.read_text()
    return ptx.returncode, ptx.stderr, texts


def _same(outputs, reference_outputs):
    return all(outputs.get(name) == reference_outputs[name] for name in reference_outputs)


def _difference(outputs, reference_outputs, ours="Kiln", theirs="Numba"):
    """The first output that differs, and its first elements that do."""
    for name in reference_outputs:
        got, want = outputs.get(name), reference_outputs[name]
        if got == want:
            continue
        if got is None:
            return f"{name}: {ours} has no such output"
        got, want = decode(got), decode(want)
        if got.shape != want.shape:
            return f"{name}: {ours} has shape {got.shape}, {theirs} {want.shape}"
        got, want = got.reshape(-1), want.reshape(-1)
        elements = lambda a: a.view(np.uint8).reshape(a.size, -1)  # noqa: E731
        differ = np.flatnonzero(np.any(elements(got) != elements(want), axis=1))
        shown = differ[:8].tolist()
        return (f"{name} ({got.dtype}) differs at {len(differ)} of {got.size} elements, first at {shown}: "
                f"{ours} {got[shown].tolist()}, {theirs} {want[shown].tolist()}")
    return ""


def judge(programs, timeout=120, confirm_matches=True, simulator_too=True):
    """Runs `programs` (of one generator) on Kiln and on Numba; returns one
    Outcome per program.

    With `confirm_matches` False, njit runs only for programs on which Kiln
    and the simulator disagree (or the simulator fails or cannot judge):
    two independent implementations agreeing bit for bit is taken as a
    match. Campaigns use this to spend Numba's compile time where it
    decides something; the CI batch confirms every program against njit.
    """
    generator = generator_of(programs[0])
    with tempfile.TemporaryDirectory(prefix="kiln-difftest-") as work:
        work = pathlib.Path(work)
        # A cache of the batch's own: the PTX build reuses what the module
        # build compiled, and nothing comes from another compiler's build.
        os.environ["KILN_CACHE_DIR"] = str(work / "cache")
        simulated = [p for p in programs if p.simulator_judges] if simulator_too else []
        simulator = {}
        if simulated:
            sim_dir = work / "sim"
            sim_dir.mkdir()
            (sim_dir / "sim_batch.py").write_text(module_source(simulated))
            simulator = _run_child(sim_dir, "simulator", generator, "sim_batch",
                                   [p.seed for p in simulated], timeout)[0]
        kiln = {}
        for switchable in (False, True):
            group = [p for p in programs if switchable_index_checks(p) == switchable]
            kiln.update(_run_on_kiln(group, generator, work, timeout))

        def agreed(p):
            return "outputs" in kiln[p.seed] and "outputs" in simulator.get(p.seed, {}) and \
                _same(kiln[p.seed]["outputs"], simulator[p.seed]["outputs"])

        checked = programs if confirm_matches else [p for p in programs if not agreed(p)]
        reference = {}
        if checked:
            host_dir = work / "host"
            host_dir.mkdir()
            (host_dir / "host_batch.py").write_text(module_source(checked, host=True))
            # Numba compiles each program in seconds (a generator in twice
            # that): the reference's time-out grows with the batch, as a
            # Kiln hang is what the others' time-outs are there to catch.
            reference_timeout = max(timeout, REFERENCE_SECONDS_PER_PROGRAM * len(checked))
            reference, _ = _run_child(host_dir, "host", generator, "host_batch", [p.seed for p in checked],
                                      reference_timeout)
        outcomes = []
        for program in programs:
            seed = program.seed
            if not confirm_matches and agreed(program):
                reference[seed] = simulator[seed]
            expected = reference.get(seed, {})
            if "outputs" not in expected:
                outcomes.append(Outcome(seed, INVALID, expected.get("error", "no result")))
                continue
            outcome = _verdict(program, kiln[seed], expected)
            if outcome.verdict == COMPILE_ERROR:
                refusal = numba_cuda_refusal(program, work / f"numba_cuda_{seed}", timeout)
                if refusal:
                    outcome = Outcome(seed, INVALID, f"Numba's CUDA compiler refuses it too: {refusal}")
            if outcome.verdict == MATCH and simulator_too and program.simulator_judges:
                sim = simulator.get(seed, {}).get("outputs")
                if sim is None or not _same(sim, expected["outputs"]):
                    outcome.verdict = SIMULATOR_DIVERGENCE
                    if sim is None:
                        outcome.detail = simulator.get(seed, {}).get("error", "no simulator result")
                    else:
                        outcome.detail = _difference(sim, expected["outputs"], ours="simulator")
            outcomes.append(outcome)
        return outcomes


def _verdict(program, result, expected):
    """The optimized engine against its reference mode first: a fast path
    that changes a result is wrong whatever Numba computes; then both
    against Numba."""
    seed = program.seed
    if "verdict" in result:
        return Outcome(seed, result["verdict"], result["detail"])
    optimized, plain = result["kiln"], result["reference"]
    for run in ("kiln", "unchecked"):
        if run not in result:
            continue
        fast, what = result[run], RUN_NAMES[run]
        if "error" in fast or "error" in plain:
            if fast != plain:
                return Outcome(seed, FAST_PATH_MISMATCH,
                               f"{what}: {fast.get('error', 'no error')}; "
                               f"its reference mode: {plain.get('error', 'no error')}")
            return Outcome(seed, CRASH, fast["error"])
        if not _same(fast["outputs"], plain["outputs"]):
            return Outcome(seed, FAST_PATH_MISMATCH,
                           _difference(fast["outputs"], plain["outputs"], ours=what,
                                       theirs="its reference mode"))
    if not _same(optimized["outputs"], expected["outputs"]):
        return Outcome(seed, MISMATCH, _difference(optimized["outputs"], expected["outputs"]))
    if stores_anything(program, expected["outputs"]) and not result["stores"]:
        return Outcome(seed, LOST_STORES, "no store to global memory (st.global, or an atomic) in the sm_80 PTX")
    return Outcome(seed, MATCH)


def _run_on_kiln(programs, generator, work, timeout, depth=0):
    """Builds and runs `programs` (all of one switchable_index_checks) as
    one module, on the engine and in its reference mode (a switchable
    module: without index checks too), yielding (seed, result); on a build
    failure, crash or hang splits the batch until each culprit stands
    alone."""
    if not programs:
        return
    switchable = switchable_index_checks(programs[0])
    name = f"batch{depth}_{programs[0].seed}"
    directory = work / name
    directory.mkdir()
    flags = ["--switchable-index-checks"] if switchable else []
    status, stderr, ptx = _build(directory, name, module_source(programs), timeout, flags)
    seeds = [p.seed for p in programs]
    kiln_runs = SWITCHABLE_RUNS if switchable else KILN_RUNS
    runs, failure = {}, "build" if status != 0 else None
    if status == 0:
        for run, environment in kiln_runs.items():
            runs[run], ended = _run_child(directory, "kiln", generator, name, seeds, timeout, environment)
            failure = failure or (ended and (run, ended))
    if failure and len(programs) > 1:
        half = len(programs) // 2
        yield from _run_on_kiln(programs[:half], generator, work, timeout, depth + 1)
        yield from _run_on_kiln(programs[half:], generator, work, timeout, depth + 1)
        return
    for program in programs:
        seed = program.seed
        if status is None:
            yield seed, {"verdict": HANG, "detail": stderr}
        elif status < 0:
            yield seed, {"verdict": INTERNAL_ERROR,
                         "detail": f"kiln build ended by signal {-status}: {stderr.strip()[-2000:]}"}
        elif status != 0:
            internal = status == 3 or "internal error" in stderr
            yield seed, {"verdict": INTERNAL_ERROR if internal else COMPILE_ERROR,
                         "detail": stderr.strip()[-2000:]}
        elif failure and any(seed not in runs[run] for run in kiln_runs):
            run, ended = failure
            where = RUN_NAMES[run]
            if ended == "timeout":
                yield seed, {"verdict": HANG, "detail": f"the kernel ran past the time-out on {where}"}
            else:
                yield seed, {"verdict": CRASH, "detail": f"on {where}: {ended}"}
        else:
            result = {run: runs[run][seed] for run in kiln_runs}
            result["stores"] = stores_to_global_memory(ptx.get(kernel_name(program), ""))
            if "outputs" in result["kiln"]:
                result["outputs"] = result["kiln"]["outputs"]
            yield seed, result
