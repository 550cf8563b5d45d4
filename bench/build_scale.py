"""A whole module's build against Numba's, as the module grows.

    python3 bench/build_scale.py [--kernels 100,500] [--repeats 1] [--kiln build/driver/kiln] [--json FILE]

For each N of --kernels, a module of N kernels (bench/cache_speed.py's
generator: one specialization each, small loops, all different) is built
from a cold start:

* Kiln: `kiln build kernels.py --emit fatbin -o TMP -j 1 --no-cache`, one
  job, Kiln's default architectures (PTX for five targets, seven cubins);
  wall time and peak memory (maximum resident set size of the largest
  process, from `/usr/bin/time -v`);
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
from cache_speed import module_source  # noqa: E402
from check_speed import max_rss_kib  # noqa: E402

SIGNATURE = "void(float32[::1], float32[::1], int32)"


def kiln_build(kiln, source, out):
    """(seconds, peak KiB) of one cold build."""
    command = [kiln, "build", str(source), "--emit", "fatbin", "-o", str(out), "-j", "1", "--no-cache"]
    start = time.perf_counter()
    peak = max_rss_kib(command, bc.bench_env())
    return time.perf_counter() - start, peak


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
            kiln_s, kiln_kib, numba_s = [], [], []
            for repeat in range(options.repeats):
                seconds, peak = kiln_build(options.kiln, source, work / f"out{n}_{repeat}")
                kiln_s.append(seconds)
                kiln_kib.append(peak)
                numba_s.append(numba_build(source))
            results[n] = {"kiln_s": kiln_s, "kiln_max_rss_kib": kiln_kib, "numba_s": numba_s}
    load = bc.load_average()
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {load}\n")
    print("| kernels | kiln build -j 1 | peak memory | Numba compile_ptx + ptxas | Numba ÷ Kiln |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n, measured in results.items():
        kiln, numba = statistics.median(measured["kiln_s"]), statistics.median(measured["numba_s"])
        print(f"| {n} | {kiln:.1f} s | {statistics.median(measured['kiln_max_rss_kib']) / 1024:.0f} MiB | "
              f"{numba:.1f} s | {numba / kiln:.2f}x |")
    bc.write_json(options.json, {"repeats": options.repeats, "signature": SIGNATURE, "load_average": load,
                                 "results": {str(n): r for n, r in results.items()}})


if __name__ == "__main__":
    main()
