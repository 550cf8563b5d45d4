"""The device check, on a GPU machine: runs what scripts/gpu_check/prepare.py
bundled here, on the CUDA driver, and writes one results file.

    python3 scripts/gpu_check/device_checks.py BUNDLE --out DIR [--target cuda]
            [--driver LIBRARY]

With --target cpu and a stand-in --driver (scripts/gpu-check.sh --dry-run),
the same steps run on a machine without a GPU: kernels on the CPU engine,
the image choice against the stand-in driver.

Steps, each recorded in DIR/gpu-check.json:

  machine    Python, NumPy, the driver's CUDA version, the device's name and
             compute capability
  runtime    the bundled kiln-runtime wheel installed into a folder of its
             own (no network, no compiler)
  examples   the runtime's example tests (tests/runtime/python/
             test_built_examples.py: every example against NumPy
             references) on the bundled modules
  choice     vector_add built as one kind of image only: the cubin for the
             device's architecture and its PTX must run, a cubin for
             another major architecture must be refused by name
  host_api   kiln.cuda's host API on the device (scripts/gpu_check/
             host_api_checks.py): device arrays, streams, events, pinned and
             mapped memory, CuPy and PyTorch both ways, IPC; each check
             passed, failed or skipped, with its message or reason
  side_by_side  Kiln against numba-cuda on the same GPU (scripts/gpu_check/
             side_by_side_runs.py): first calls, launch overhead, kernel
             times, registers and occupancy of five kernels
  programs   the differential tester's programs: the outputs on the device
             against the CPU engine's, recorded where the bundle was made

gpu-check.json is written again after every step, so that what the steps
done so far found survives a check stopped on its way.
"""

import argparse
import ctypes
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

from program_runs import run_programs as run_built_programs
from gpu_check_report import verdict
from side_by_side_runs import kiln_side_problems, run_side_by_side

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
HOST_API_TIMEOUT_S = 180
# The differential tester's programs last: the longest step, which the
# device check's time limit would cut first.
STEPS = ("examples", "choice", "host_api", "side_by_side", "programs")
# CU_DEVICE_ATTRIBUTE_*: what an occupancy is computed from.
MULTIPROCESSOR_COUNT = 16
MAX_THREADS_PER_MULTIPROCESSOR = 39


def device_facts(driver_path):
    """The driver's version and device 0's name and compute capability."""
    try:
        driver = ctypes.CDLL(driver_path)
    except OSError as error:
        return {"error": f"cannot load {driver_path}: {error}"}
    if driver.cuInit(0) != 0:
        return {"error": "cuInit failed: no usable GPU"}
    version, count, device = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    driver.cuDriverGetVersion(ctypes.byref(version))
    driver.cuDeviceGetCount(ctypes.byref(count))
    if count.value == 0:
        return {"error": "the driver reports no device"}
    driver.cuDeviceGet(ctypes.byref(device), 0)
    name = ctypes.create_string_buffer(256)
    driver.cuDeviceGetName(name, 256, device)
    major, minor = ctypes.c_int(), ctypes.c_int()
    driver.cuDeviceGetAttribute(ctypes.byref(major), 75, device)  # compute capability major
    driver.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)  # compute capability minor
    multiprocessors, most_threads = ctypes.c_int(), ctypes.c_int()
    driver.cuDeviceGetAttribute(ctypes.byref(multiprocessors), MULTIPROCESSOR_COUNT, device)
    driver.cuDeviceGetAttribute(ctypes.byref(most_threads), MAX_THREADS_PER_MULTIPROCESSOR, device)
    return {"driver_cuda_version": f"{version.value // 1000}.{version.value % 1000 // 10}",
            "devices": count.value, "name": name.value.decode(),
            "compute_capability": [major.value, minor.value],
            "multiprocessors": multiprocessors.value,
            "max_threads_per_multiprocessor": most_threads.value}


def install_runtime(bundle, site):
    wheels = sorted((bundle / "wheels").glob("kiln_runtime-*.whl"))
    if not wheels:
        return {"error": f"no kiln-runtime wheel in {bundle / 'wheels'}"}
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
                           "--no-deps", "--no-compile", "--target", site, wheels[-1]],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return {"wheel": wheels[-1].name}


def run_examples(bundle, environment, out):
    report = out / "examples-junit.xml"
    env = dict(environment, KILN_PREBUILT_MODULES=str(bundle / "modules"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--junitxml={report}", ROOT / "tests" / "runtime" / "python" /
                           "test_built_examples.py"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    failures = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    return {"passed": done.returncode == 0, "summary": summary, "failures": failures,
            "log_tail": (done.stdout + done.stderr)[-3000:] if done.returncode else ""}


CHOICE_RUN = r"""
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import vector_add
n = 4096
x = np.arange(n, dtype=np.float32)
y = x * 3
r = np.zeros_like(x)
try:
    vector_add.vector_add[(n + 255) // 256, 256](r, x, y)
except Exception as error:
    print("ERROR " + type(error).__name__ + ": " + str(error).splitlines()[0])
else:
    if sys.argv[2] == "launch-only":
        print("RAN (on a stand-in driver, which runs nothing)")
    else:
        print("RAN " + ("right" if np.array_equal(r, x + y) else "wrong"))
"""


def run_choice(bundle, environment, capability, runs_kernels):
    """Which single-image builds run: the device's own cubin and PTX must,
    a cubin of another major architecture must not (the driver has no
    image for the device, and the runtime names the architectures). A
    stand-in driver launches without running anything: there, launching is
    all that is expected."""
    major = capability[0] if capability else None
    ran = "RAN right" if runs_kernels else "RAN"
    expected = {"cubin_sm80": ran if major == 8 else "ERROR",
                "cubin_sm90": ran if major == 9 else "ERROR",
                "ptx_compute90": ran if major is not None and major >= 9 else "ERROR"}
    results = {}
    for variant, expectation in expected.items():
        done = subprocess.run([sys.executable, "-c", CHOICE_RUN, bundle / "choice" / variant,
                               "check" if runs_kernels else "launch-only"],
                              capture_output=True, text=True, env=environment, timeout=300)
        said = (done.stdout.strip().splitlines() or [done.stderr.strip()[-500:]])[-1]
        results[variant] = {"said": said, "expected": expectation,
                            "as_expected": said.startswith(expectation)}
    return results


def run_programs(bundle, manifest, environment, target):
    references = json.loads((bundle / "programs" / "references.json").read_text())
    counts = {"match": 0, "mismatch": 0, "error": 0, "missing": 0}
    differences = []
    for batch in manifest["programs"]["batches"]:
        folder = bundle / "programs" / batch["module"]
        results, done = run_built_programs(folder, batch["module"], batch["seeds"], environment,
                                           timeout=1200)
        for seed in batch["seeds"]:
            expected, got = references.get(str(seed), {}), results.get(str(seed))
            if got is None:
                counts["missing"] += 1
                differences.append({"seed": seed, "why": f"no result ({done.stderr[-300:]})"})
            elif "error" in got and "error" not in expected:
                counts["error"] += 1
                differences.append({"seed": seed, "why": got["error"]})
            elif got == expected:
                counts["match"] += 1
            else:
                counts["mismatch"] += 1
                names = [name for name in expected.get("outputs", {})
                         if got.get("outputs", {}).get(name) != expected["outputs"][name]]
                differences.append({"seed": seed, "why": f"{target} differs from the CPU engine "
                                                         f"in {names or got}"})
    return {"counts": counts, "differences": differences[:50]}


def run_host_api(bundle, environment, target):
    """host_api_checks.py's results, with how many checks passed, failed and
    were skipped."""
    done = subprocess.run([sys.executable, HERE / "host_api_checks.py",
                           bundle / "kernels" / "host_api_kernels", "--target", target],
                          capture_output=True, text=True, env=environment, timeout=HOST_API_TIMEOUT_S)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": f"host_api_checks.py exited with {done.returncode}: "
                         f"{(done.stderr or done.stdout)[-2000:]}"}
    checks = json.loads(lines[-1])
    counts = {status: sum(1 for outcome in checks.values() if outcome["status"] == status)
              for status in ("passed", "failed", "skipped")}
    return {"counts": counts, "checks": checks}


def write_results(results, out):
    results["failed"] = failed_checks(results)
    (out / "gpu-check.json").write_text(json.dumps(results, indent=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--target", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--driver", default="libcuda.so.1")
    args = parser.parse_args()

    bundle, out = args.bundle.resolve(), args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    results = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "target": args.target,
               "machine": {"python": platform.python_version(), "platform": platform.platform()}}
    try:
        import numpy
        results["machine"]["numpy"] = numpy.__version__
    except ImportError:
        results["machine"]["numpy"] = None
    results["device"] = device_facts(args.driver)
    results["bundle"] = json.loads((bundle / "manifest.json").read_text())

    site = out.parent / "kiln-runtime-site"
    results["runtime"] = install_runtime(bundle, site)
    environment = dict(os.environ, KILN_TARGET=args.target, KILN_CUDA_DRIVER=args.driver,
                       KILN_BUILD_DIR=str(site.parent / "no-build"), PYTHONWARNINGS="ignore",
                       PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    if "error" not in results["runtime"]:
        steps = {
            "examples": lambda: run_examples(bundle, environment, out),
            "choice": lambda: run_choice(bundle, dict(environment, KILN_TARGET="cuda"),
                                         results["device"].get("compute_capability"),
                                         runs_kernels=args.target == "cuda"),
            "host_api": lambda: run_host_api(bundle, environment, args.target),
            "side_by_side": lambda: run_side_by_side(bundle, environment, args.target,
                                                     results["device"]),
            "programs": lambda: run_programs(bundle, results["bundle"], environment, args.target),
        }
        for name, step in steps.items():
            step_started = time.monotonic()
            try:
                results[name] = step()
            except Exception as error:  # a step that breaks must not lose the others' results
                results[name] = {"error": f"{type(error).__name__}: {error}"}
            results[name]["seconds"] = round(time.monotonic() - step_started, 1)
            results["seconds"] = round(time.monotonic() - started, 1)
            write_results(results, out)
    results["seconds"] = round(time.monotonic() - started, 1)
    write_results(results, out)
    print(json.dumps({key: results[key] for key in ("device", "runtime") if key in results}))
    for name in STEPS:
        if name in results:
            print(f"{name}: {json.dumps(brief(name, results[name]))}")
    print(f"{out / 'gpu-check.json'}: {verdict(results['failed'])}")
    return 1 if results["failed"] else 0


def brief(name, result):
    if "error" in result:
        return {"error": result["error"]}
    if name == "choice":
        return {variant: outcome["said"][:80] for variant, outcome in result.items()
                if isinstance(outcome, dict)}
    if name == "side_by_side":
        return {side: result[side].get("skipped") or {
                    "first_call_cold_s": result[side]["first_call"]["cold"].get("first_call_s"),
                    "launch_overhead_us": result[side].get("launch_overhead_us"),
                    "kernel_ms": {kernel: figures.get("kernel_ms")
                                  for kernel, figures in result[side].get("kernels", {}).items()}}
                for side in ("kiln", "numba")}
    return {key: value for key, value in result.items() if key in ("summary", "counts", "seconds")}


def failed_checks(results):
    """The steps that failed, or have not run (yet)."""
    failed = [name for name in ("device", "runtime") if "error" in results.get(name, {})]
    for name in STEPS:
        result = results.get(name)
        if result is None or "error" in result:
            failed.append(name)
        elif name == "examples" and not result["passed"]:
            failed.append(name)
        elif name == "choice" and not all(outcome["as_expected"] for outcome in result.values()
                                          if isinstance(outcome, dict)):
            failed.append(name)
        elif name == "programs" and (sum(result["counts"].values()) == 0 or
                                     result["counts"]["match"] != sum(result["counts"].values())):
            failed.append(name)
        elif name == "host_api" and (result["counts"]["failed"] or not result["counts"]["passed"]):
            failed.append(name)
        elif name == "side_by_side" and kiln_side_problems(result):
            failed.append(name)
    return failed


if __name__ == "__main__":
    sys.exit(main())
