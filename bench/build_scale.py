"""A whole module's build against Numba's, as the module grows.

    python3 bench/build_scale.py [--kernels 100,500] [--repeats 1] [--kiln build/driver/kiln] [--json FILE]

For each N of --kernels, a module of N kernels (one specialization each,
all different: a short loop over neighbouring elements, `for j in
range(K): acc = acc * 0.5 + b[(i + j) % n]`) is built from a cold start:

* Kiln: what `add_python_kernels()`, setuptools and users run, `kiln build
  kernels.py --module kernelsN -o TMP -j 1 --no-cache --json`: one job,
  Kiln's default architectures (PTX for five targets, seven cubins) and the
  host code of the CPU engine; wall time, peak memory (maximum resident set
  size of the largest process, from `/usr/bin/time -v`), and from the
  build's own --json the time of its steps (host code per kernel: median
  and slowest; LLVM to PTX; ptxas; fatbinary);
* Numba: `bench/numba_side.py module` in bench/.venv: `numba.cuda.compile_ptx`
  of every kernel for the same five PTX targets and ptxas for the same seven
  cubins, with the flags Kiln passes; Numba's import is left out of its
  time, the module's import (which only records the kernels) is in it.

Reported per N: each side's median and spread over --repeats, and Numba's
time divided by Kiln's.
"""

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402
from check_speed import max_rss_kib  # noqa: E402

SIGNATURE = "void(float32[::1], float32[::1], int32)"


def module_source(kernels):
    """A module of `kernels` kernels, each a short loop of its own length
    and scale."""
    lines = ["from numba import cuda, float32, int32, void", ""]
    for k in range(kernels):
        lines += [
            "",
            "@cuda.jit(void(float32[::1], float32[::1], int32))",
            f"def kernel{k}(a, b, n):",
            "    i = cuda.grid(1)",
            "    if i < n:",
            f"        acc = b[i] * {k + 1}.0",
            f"        for j in range({k % 7 + 2}):",
            "            acc = acc * 0.5 + b[(i + j) % n]",
            "        a[i] = acc",
            "",
        ]
    return "\n".join(lines)


def step_seconds(report):
    """From `kiln build --json`: the host code's time per kernel (a list)
    and each other step's total, in seconds."""
    host, totals = [], {}
    for kernel in report["kernels"]:
        for step in kernel["steps"]:
            if step["step"] == "host":
                host.append(step["microseconds"] / 1e6)
            else:
                totals[step["step"]] = totals.get(step["step"], 0) + step["microseconds"] / 1e6
    for image in report["images"]:
        for step in image["steps"]:
            totals[step["step"]] = totals.get(step["step"], 0) + step["microseconds"] / 1e6
    return host, totals


def kiln_build(kiln, source, out, module):
    """(seconds, peak KiB, host seconds per kernel, other steps' seconds)
    of one cold build."""
    report = out / "build.json"
    out.mkdir(parents=True, exist_ok=True)
    command = [kiln, "build", str(source), "--module", module, "-o", str(out), "-j", "1", "--no-cache",
               "--json"]
    start = time.perf_counter()
    peak = max_rss_kib(command, bc.bench_env(), stdout=report)
    seconds = time.perf_counter() - start
    host, totals = step_seconds(json.loads(report.read_text()))
    return seconds, peak, host, totals


def numba_build(source):
    python = bc.require_bench_python()
    _, stdout = bc.timed_run([python, str(bc.BENCH / "numba_side.py"), "module", str(source),
                              "--signature", SIGNATURE])
    result = json.loads(stdout.strip().splitlines()[-1])
    if result["refused"]:
        raise SystemExit(f"Numba refused kernels: {result['refused'][:3]}")
    return result["total_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", default="100,500", help="comma-separated module sizes")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--kiln", default=str(bc.default_build_dir() / "driver" / "kiln"))
    parser.add_argument("--json", help="also write the raw measurements here")
    options = parser.parse_args()
    version = bc.wait_for_kiln(options.kiln)
    sizes = [int(n) for n in options.kernels.split(",")]
    results = {}
    with tempfile.TemporaryDirectory(prefix="kiln-bench-build-scale-") as folder:
        work = pathlib.Path(folder)
        for n in sizes:
            source = work / f"kernels{n}.py"
            source.write_text(module_source(n))
            kiln_s, kiln_kib, numba_s, host_s, steps = [], [], [], [], []
            for repeat in range(options.repeats):
                seconds, peak, host, totals = kiln_build(options.kiln, source, work / f"out{n}_{repeat}",
                                                         f"kernels{n}")
                kiln_s.append(seconds)
                kiln_kib.append(peak)
                host_s.append(host)
                steps.append(totals)
                numba_s.append(numba_build(source))
            results[n] = {"kiln_s": kiln_s, "kiln_max_rss_kib": kiln_kib, "numba_s": numba_s,
                          "kiln_host_s_per_kernel": host_s, "kiln_steps_s": steps}
    load = bc.load_average()
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {load}\n")
    print("| kernels | kiln build --module -j 1 | peak memory | host code a kernel: median (slowest) "
          "| LLVM to PTX | ptxas | Numba compile_ptx + ptxas | Numba ÷ Kiln |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, measured in results.items():
        kiln, numba = statistics.median(measured["kiln_s"]), statistics.median(measured["numba_s"])
        host = [s for run in measured["kiln_host_s_per_kernel"] for s in run]
        steps = measured["kiln_steps_s"]
        llvm = statistics.median(run.get("llvm", 0) + run.get("ptx", 0) for run in steps)
        ptxas = statistics.median(run.get("cubin", 0) for run in steps)
        print(f"| {n} | {kiln:.1f} s | {statistics.median(measured['kiln_max_rss_kib']) / 1024:.0f} MiB | "
              f"{statistics.median(host) * 1e3:.1f} ms ({max(host) * 1e3:.1f} ms) | {llvm:.1f} s | "
              f"{ptxas:.1f} s | {numba:.1f} s | {numba / kiln:.2f}x |")
    bc.write_json(options.json, {"repeats": options.repeats, "signature": SIGNATURE, "load_average": load,
                                 "results": {str(n): r for n, r in results.items()}})


if __name__ == "__main__":
    main()
