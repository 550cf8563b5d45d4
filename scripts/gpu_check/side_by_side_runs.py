"""The device check's side-by-side step: Kiln against numba-cuda on the same
GPU, for the kernels of scripts/gpu_check/kernels/side_by_side.py (Kiln's
module built into the bundle; numba-cuda's, the source, compiled on the
device). Each side runs in fresh processes of scripts/gpu_check/
side_by_side_worker.py, each with a timeout:

  first_call.cold  process start to the first launch finished, then each
                   kernel's first launch (numba-cuda compiles at import,
                   into an empty NUMBA_CACHE_DIR)
  first_call.warm  the same in a second process (numba-cuda loads what the
                   first one cached: the kernels are `cache=True`)
  measure          each kernel checked against NumPy and timed by CUDA
                   events, registers and resident blocks; the launch
                   overhead of an empty kernel

Occupancy is computed here: the resident blocks the runtime reports
(cuOccupancyMaxActiveBlocksPerMultiprocessor, through each side's
max_cooperative_grid_blocks) over the multiprocessors, in warps, against
the warps a multiprocessor holds (both from the driver, device_facts).

With --target cpu (the dry run) Kiln's side runs on the CPU engine, which
proves the scripts and the bundle, and numba-cuda's is skipped.
"""

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
WORKER = HERE / "side_by_side_worker.py"
KERNEL_SOURCES = HERE / "kernels"
KERNELS = ("saxpy", "stencil", "block_sum", "mandelbrot", "matmul")
# Several times what each should take on a GPU (numba-cuda's cold first
# call, which compiles six kernels, tens of seconds), within the device
# check's eight minutes.
FIRST_CALL_TIMEOUT_S = 120
MEASURE_TIMEOUT_S = 180
OCCUPANCY_METHOD = ("cuOccupancyMaxActiveBlocksPerMultiprocessor, through each runtime's "
                    "max_cooperative_grid_blocks(), over the device's multiprocessors")


def run_worker(side, folder, phase, environment, target, timeout):
    """The worker's results, or {"error": ...} where it failed or timed out."""
    command = [sys.executable, WORKER, side, folder, phase, "--target", target,
               "--spawned-at", repr(time.time())]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=environment,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"{phase} timed out after {timeout} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        said = (done.stderr or done.stdout)[-1500:]
        return {"error": f"{phase} exited with {done.returncode}: {said}"}
    return json.loads(lines[-1])


def add_occupancy(kernel, device):
    """Blocks per multiprocessor and the theoretical occupancy (resident
    warps over the most a multiprocessor holds), where the worker said how
    many blocks stay resident."""
    resident = kernel.get("resident_blocks")
    multiprocessors = device.get("multiprocessors")
    most_threads = device.get("max_threads_per_multiprocessor")
    if not (resident and multiprocessors and most_threads):
        return
    kernel["blocks_per_multiprocessor"] = resident // multiprocessors
    warps_per_block = -(-kernel["threads_per_block"] // 32)
    resident_warps = kernel["blocks_per_multiprocessor"] * warps_per_block
    kernel["occupancy"] = round(resident_warps / (most_threads // 32), 3)


def run_side(side, folder, environment, target, device):
    result = {"target": target,
              "first_call": {phase: run_worker(side, folder, "first-call", environment, target,
                                               FIRST_CALL_TIMEOUT_S)
                             for phase in ("cold", "warm")}}
    result.update(run_worker(side, folder, "measure", environment, target, MEASURE_TIMEOUT_S))
    for kernel in result.get("kernels", {}).values():
        add_occupancy(kernel, device)
    return result


def numba_side(target, device):
    if target != "cuda":
        return {"skipped": "needs a GPU: numba-cuda runs kernels on a GPU only"}
    if importlib.util.find_spec("numba") is None:
        return {"skipped": "numba-cuda is not installed (there is no numba module)"}
    cache = tempfile.mkdtemp(prefix="gpu-check-numba-cache-")
    try:
        # The machine's own Python environment, without the kiln runtime's
        # folder, and an empty cache: numba-cuda's first process compiles.
        # Its low-occupancy warning would be made (and then ignored) at
        # every launch of the one-block empty kernel, which Kiln does not do.
        environment = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONWARNINGS="ignore",
                           NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0")
        return run_side("numba", KERNEL_SOURCES, environment, target, device)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def run_side_by_side(bundle, kiln_environment, target, device):
    return {"kernels": list(KERNELS), "occupancy_method": OCCUPANCY_METHOD,
            "kiln": run_side("kiln", bundle / "kernels" / "side_by_side", kiln_environment, target,
                             device),
            "numba": numba_side(target, device)}


def kiln_side_problems(result):
    """What is wrong with Kiln's side: a worker that failed, a kernel that
    differs from NumPy or has no time. numba-cuda's side is measured, not
    judged: its failures are numba-cuda's."""
    kiln = result.get("kiln", {})
    problems = [f"first call {phase}: {outcome['error']}"
                for phase, outcome in kiln.get("first_call", {}).items() if "error" in outcome]
    if "error" in kiln:
        problems.append(kiln["error"])
    for name in KERNELS:
        kernel = kiln.get("kernels", {}).get(name, {})
        if "error" in kernel or not kernel.get("matches_numpy") or "kernel_ms" not in kernel:
            problems.append(f"{name}: {kernel.get('error') or 'differs from NumPy or has no time'}")
    if "launch_overhead_us" not in kiln:
        problems.append(f"launch overhead: {kiln.get('launch_overhead_error', 'not measured')}")
    return problems
