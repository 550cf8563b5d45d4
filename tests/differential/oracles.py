"""Running random programs three ways and judging the results.

Each batch of programs runs

  * on Kiln: the batch is one kernel module, built with `kiln build
    --module` for sm_80 (so ptxas assembles every kernel) and run on the
    CPU engine through the real runtime, in a child process, so that a
    crash or a hang is an outcome rather than the end of the test; each
    kernel's sm_80 PTX is also checked to keep a store to global memory;
  * on Numba's compiled semantics: the same program rendered as
    `@numba.njit` functions (the kernel body becomes a function of the
    thread index, run for every thread in turn; a synchronizing kernel, an
    njit generator, runs every thread to each barrier in turn);
  * on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), for programs
    that run as one block.

Numba's compiled semantics is the specification: Kiln must match njit bit
for bit (the programs use no transcendental functions, so every float
operation is IEEE-exact on both). The simulator runs kernels as Python on
NumPy scalars, and NumPy 2's scalar rules (NEP 50) differ from Numba's: an
int8 plus an int8 stays int8 and wraps, where Numba computes in int64; a
Python int stays a Python int and never wraps; a float32 times a Python
float stays float32. Where the simulator disagrees with njit the program is
counted as a simulator divergence, not a finding; where the simulator and
njit agree and Kiln does not, the finding is doubly confirmed. A program
that Numba itself rejects (Numba's typing is stricter than the generator's
idea of kinds, for example uint64 mixed with int64 is float64) is counted
as invalid and skipped. The njit rendering cannot tell whether Numba
accepts what only a kernel has (a shuffle's value, say, must be a 32- or
64-bit number): where Kiln refuses a program, Numba's CUDA compiler
(`numba.cuda.compile_ptx`) decides whether it is invalid or a finding.
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

from programs import ARRAY_LENGTH, INPUTS, KERNEL_SIGNATURE, kernel_decorator, scratch_array_length

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO / "build"))
KILN = os.environ.get("KILN", str(BUILD / "driver" / "kiln"))
PYTHON = sys.executable

MATCH = "match"
MISMATCH = "mismatch"
COMPILE_ERROR = "kiln compile error"
INTERNAL_ERROR = "kiln internal error"
CRASH = "kiln crash"
HANG = "kiln hang"
LOST_STORES = "ptx lost its stores"
INVALID = "invalid (numba rejects it)"
SIMULATOR_DIVERGENCE = "simulator differs from compiled numba"
FINDINGS = (MISMATCH, COMPILE_ERROR, INTERNAL_ERROR, CRASH, HANG, LOST_STORES)
# Time the njit reference may take per program, several times what it needs.
REFERENCE_SECONDS_PER_PROGRAM = 15


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


# What writes global memory in PTX: a store, or an atomic on any state space
# but shared memory (LLVM writes `atom.global`, or `red.global` where the
# old value goes unused).
GLOBAL_WRITE = re.compile(r"\bst\.global\.|\b(atom|red)\.(?!shared\.)")


def stores_to_global_memory(ptx):
    return GLOBAL_WRITE.search(ptx) is not None


def stores_anything(outputs):
    return any(value != SENTINEL for values in outputs.values() for value in values)


HEADER = "import numpy as np\nfrom numba import cuda\n"
HOST_HEADER = "import numpy as np\nfrom numba import njit\n"


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
import numpy as np
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from oracles import inputs, output_arrays, kernel_name
from programs import generate, run_threads
mode, module_name, seeds = sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
if mode == "simulator":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
module = importlib.import_module(module_name)
results = {}
for seed in seeds:
    program = generate(seed)
    arrays = inputs(seed)
    outputs = output_arrays(program)
    arguments = list(arrays.values()) + list(outputs.values())
    try:
        function = getattr(module, kernel_name(program))
        if mode == "host":
            run_threads(function, program.threads, arguments, program.blocks)
        else:
            grid, block = program.launch()
            function[grid, block](*arguments)
        for name, array in outputs.items():
            if array.dtype.kind == "f":
                array[np.isnan(array)] = np.nan  # one NaN: payloads are not semantics
        results[seed] = {"outputs": {k: v.view(np.int64).tolist() for k, v in outputs.items()}}
    except Exception as error:
        results[seed] = {"error": type(error).__name__ + ": " + str(error).splitlines()[0][:300]}
    print(json.dumps({str(seed): results[seed]}), flush=True)
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


def numba_cuda_refusal(program, directory, timeout):
    """Why Numba's CUDA compiler refuses `program`'s kernel, or None when
    it compiles it. A kernel whose signature is in its decorator compiles
    for the current device as it is defined, so the child gets the kernel
    undecorated and its signature apart."""
    undecorated = module_source([program]).replace(kernel_decorator() + "\n", "")
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "undecorated.py").write_text(undecorated)
    try:
        done = subprocess.run([PYTHON, "-c", NUMBA_CUDA_COMPILE, str(directory), "undecorated",
                               kernel_name(program), KERNEL_SIGNATURE],
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


def _run_child(directory, mode, module, seeds, timeout):
    env = dict(os.environ, PYTHONWARNINGS="ignore", KILN_TARGET="cpu")
    if mode == "simulator":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    command = [PYTHON, "-c", RUN_KERNELS, str(pathlib.Path(__file__).parent), str(directory), mode,
               module, json.dumps(seeds)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as expired:
        stdout = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        return _parse(stdout), "timeout"
    status = None if done.returncode == 0 else f"exit status {done.returncode}: {done.stderr[-500:]}"
    return _parse(done.stdout), status


def _parse(stdout):
    results = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            for seed, result in json.loads(line).items():
                results[int(seed)] = result
    return results


def _build(directory, name, source, timeout):
    path = pathlib.Path(directory) / f"{name}.py"
    path.write_text(source)
    try:
        module = subprocess.run(
            [KILN, "build", path, "--module", name, "-o", directory, "--arch", "80", "-q"],
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


def _same(kiln_outputs, reference_outputs):
    return all(kiln_outputs[k] == reference_outputs[k] for k in reference_outputs)


def _difference(kiln_outputs, reference_outputs):
    for key in reference_outputs:
        got, want = kiln_outputs[key], reference_outputs[key]
        if got != want:
            as_type = np.float64 if key.endswith("f") else np.int64
            got = np.array(got, np.int64).view(as_type).tolist()
            want = np.array(want, np.int64).view(as_type).tolist()
            return f"{key}: Kiln {got}, Numba {want}"
    return ""


def judge(programs, timeout=120, confirm_matches=True, simulator_too=True):
    """Runs `programs` three ways; returns one Outcome per program.

    With `confirm_matches` False, njit runs only for programs on which Kiln
    and the simulator disagree (or the simulator fails): two independent
    implementations agreeing bit for bit is taken as a match. Campaigns use
    this to spend Numba's compile time where it decides something; the CI
    batch confirms every program against njit.
    """
    with tempfile.TemporaryDirectory(prefix="kiln-difftest-") as work:
        work = pathlib.Path(work)
        # A cache of the batch's own: the PTX build reuses what the module
        # build compiled, and nothing comes from another compiler's build.
        os.environ["KILN_CACHE_DIR"] = str(work / "cache")
        # The simulator runs a block's threads as Python threads, block after
        # block: too slow for a grid of many blocks, which njit judges alone.
        simulated = [p for p in programs if p.blocks == 1] if simulator_too else []
        simulator = {}
        if simulated:
            sim_dir = work / "sim"
            sim_dir.mkdir()
            (sim_dir / "sim_batch.py").write_text(module_source(simulated))
            simulator = _run_child(sim_dir, "simulator", "sim_batch", [p.seed for p in simulated], timeout)[0]
        kiln = {}
        for seed, result in _run_on_kiln(programs, work, timeout):
            kiln[seed] = result

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
            reference, _ = _run_child(host_dir, "host", "host_batch", [p.seed for p in checked],
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
            if outcome.verdict == MATCH and simulator_too and program.blocks == 1:
                sim = simulator.get(seed, {}).get("outputs")
                if sim is None or not _same(sim, expected["outputs"]):
                    outcome.verdict = SIMULATOR_DIVERGENCE
                    if sim is None:
                        outcome.detail = simulator.get(seed, {}).get("error", "no simulator result")
                    else:
                        outcome.detail = _difference(sim, expected["outputs"]).replace("Kiln", "simulator")
            outcomes.append(outcome)
        return outcomes


def _verdict(program, result, expected):
    seed = program.seed
    if "verdict" in result:
        return Outcome(seed, result["verdict"], result["detail"])
    if "error" in result:
        return Outcome(seed, CRASH, result["error"])
    if not _same(result["outputs"], expected["outputs"]):
        return Outcome(seed, MISMATCH, _difference(result["outputs"], expected["outputs"]))
    if stores_anything(expected["outputs"]) and not result["stores"]:
        return Outcome(seed, LOST_STORES, "no store to global memory (st.global, or an atomic) in the sm_80 PTX")
    return Outcome(seed, MATCH)


def _run_on_kiln(programs, work, timeout, depth=0):
    """Builds and runs `programs` as one module, yielding (seed, result);
    on a build failure, crash or hang splits the batch until each culprit
    stands alone."""
    if not programs:
        return
    name = f"batch{depth}_{programs[0].seed}"
    directory = work / name
    directory.mkdir()
    status, stderr, ptx = _build(directory, name, module_source(programs), timeout)
    results, failure = ({}, "build") if status != 0 else _run_child(directory, "kiln", name,
                                                                     [p.seed for p in programs], timeout)
    if (status != 0 or failure) and len(programs) > 1:
        half = len(programs) // 2
        yield from _run_on_kiln(programs[:half], work, timeout, depth + 1)
        yield from _run_on_kiln(programs[half:], work, timeout, depth + 1)
        return
    for program in programs:
        seed = program.seed
        if status is None:
            yield seed, {"verdict": HANG, "detail": stderr}
        elif status != 0:
            internal = status == 3 or "internal error" in stderr
            yield seed, {"verdict": INTERNAL_ERROR if internal else COMPILE_ERROR,
                         "detail": stderr.strip()[-2000:]}
        elif failure == "timeout" and seed not in results:
            yield seed, {"verdict": HANG, "detail": "the kernel ran past the time-out"}
        elif failure and seed not in results:
            yield seed, {"verdict": CRASH, "detail": failure}
        else:
            result = dict(results[seed])
            result["stores"] = stores_to_global_memory(ptx.get(kernel_name(program), ""))
            yield seed, result
