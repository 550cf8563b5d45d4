"""What a launch on the CPU engine costs end to end, and 1-D against 2-D grids.

    python3 bench/cpu_launch_overhead.py [--calls 20000] [--repeats 11] [--build-dir build] [--json FILE]

The kernels below are built with `kiln build --module`, then a fresh process
of the benchmark environment's Python (bench/.venv) imports them with
KILN_TARGET=cpu and times, per call, --repeats loops of --calls calls
(reported: the median loop, and the fastest and slowest; for the 2-D
against 1-D ratios also the process's CPU time per call, all threads, which
other work on a shared machine disturbs less than the elapsed time):

* `one_block[1, 32](a)`: a one-block launch of a trivial kernel on a host
  NumPy array, the whole Numba-style launch expression;
* `nothing(a)`, an `@numba.njit` function that does nothing, called with
  the same array: the cheapest compiled call from Python, for scale;
* the same element count (2^20 float32) written by a 1-D launch
  (`fill_1d[4096, 256]`), by a 2-D launch over the same 1-D array
  (`fill_2d_flat[(64, 64), (16, 16)]`, index y * 1024 + x) and by a 2-D
  launch over a 1024 x 1024 array (`fill_2d[(64, 64), (16, 16)]`), all
  4,096 blocks of 256 threads; then 16,384 blocks of 64 threads, 1-D
  (`fill_1d[16384, 64]`) and 2-D (`fill_2d[(128, 128), (8, 8)]`). These
  loops have --calls / 100 calls.
"""

# Which rows compare with which 1-D launch of the same blocks.
PAIRS = {
    "fill_2d_flat[(64, 64), (16, 16)] (same 1-D array)": "fill_1d[4096, 256] (2^20 elements)",
    "fill_2d[(64, 64), (16, 16)] (1024 x 1024 array)": "fill_1d[4096, 256] (2^20 elements)",
    "fill_2d[(128, 128), (8, 8)] (1024 x 1024 array)": "fill_1d[16384, 64] (2^20 elements)",
}

import argparse
import json
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402

KERNELS = '''
from numba import cuda


@cuda.jit("void(float32[::1])")
def one_block(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = 1.0


@cuda.jit("void(float32[::1])")
def fill_1d(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i * 0.5


@cuda.jit("void(float32[::1], int64)")
def fill_2d_flat(a, width):
    x, y = cuda.grid(2)
    i = y * width + x
    if x < width and i < a.size:
        a[i] = i * 0.5


@cuda.jit("void(float32[:, ::1])")
def fill_2d(a):
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        a[y, x] = (y * a.shape[1] + x) * 0.5
'''

SIDE = 1024


def worker(options):
    import numba
    import numpy as np

    module = __import__(options.module)
    small = np.zeros(32, np.float32)
    flat = np.zeros(SIDE * SIDE, np.float32)
    square = np.zeros((SIDE, SIDE), np.float32)

    @numba.njit
    def nothing(a):
        pass

    nothing(small)
    statements = {
        "one_block[1, 32](a)": ("module.one_block[1, 32](small)", options.calls),
        "njit nothing(a)": ("nothing(small)", options.calls),
        "fill_1d[4096, 256] (2^20 elements)": ("module.fill_1d[4096, 256](flat)", options.calls // 100),
        "fill_2d_flat[(64, 64), (16, 16)] (same 1-D array)":
            ("module.fill_2d_flat[(64, 64), (16, 16)](flat, 1024)", options.calls // 100),
        "fill_2d[(64, 64), (16, 16)] (1024 x 1024 array)":
            ("module.fill_2d[(64, 64), (16, 16)](square)", options.calls // 100),
        "fill_1d[16384, 64] (2^20 elements)": ("module.fill_1d[16384, 64](flat)", options.calls // 100),
        "fill_2d[(128, 128), (8, 8)] (1024 x 1024 array)":
            ("module.fill_2d[(128, 128), (8, 8)](square)", options.calls // 100),
    }
    results, cpu = {}, {}
    for name, (statement, calls) in statements.items():
        namespace = {"module": module, "nothing": nothing, "small": small, "flat": flat, "square": square}
        exec(compile(f"def loop(calls):\n    for _ in range(calls):\n        {statement}\n", "<loop>", "exec"),
             namespace)
        loop = namespace["loop"]
        loop(max(10, calls // 10))
        times, cpu_times = [], []
        for _ in range(options.repeats):
            start, cpu_start = time.perf_counter(), time.process_time()
            loop(calls)
            times.append((time.perf_counter() - start) / calls)
            cpu_times.append((time.process_time() - cpu_start) / calls)
        results[name] = times
        cpu[name] = cpu_times
    expected = np.arange(SIDE * SIDE, dtype=np.float32) * 0.5
    for name, array in (("flat", flat), ("square", square.reshape(-1))):
        if not np.array_equal(array, expected):
            raise SystemExit(f"the {name} fill is wrong")
    print(json.dumps({"wall": results, "cpu": cpu}))


def show(seconds):
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--module", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        return worker(options)

    measured, version = bc.run_cpu_worker(__file__, KERNELS, "cpu_launch_kernels", options.build_dir,
                                          ["--calls", str(options.calls), "--repeats", str(options.repeats)])
    results, cpu = measured["wall"], measured["cpu"]
    load = bc.load_average()
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {load}")
    print(f"# median of {options.repeats} loops (fastest – slowest loop); host NumPy arrays, KILN_TARGET=cpu\n")
    print("| what | per call, median | fastest – slowest |")
    print("| --- | ---: | ---: |")
    for name, times in results.items():
        print(f"| `{name}` | {show(statistics.median(times))} | {show(min(times))} – {show(max(times))} |")
    for name, one_d in PAIRS.items():
        print(f"\n{name} ÷ {one_d}: {statistics.median(results[name]) / statistics.median(results[one_d]):.2f}x "
              f"wall, {statistics.median(cpu[name]) / statistics.median(cpu[one_d]):.2f}x CPU time", end="")
    print()
    bc.write_json(options.json, {"calls": options.calls, "repeats": options.repeats, "load_average": load,
                                 "results": results, "cpu": cpu})


if __name__ == "__main__":
    main()
