"""CPU engine throughput per kernel against NumPy, @njit and @njit(parallel=True).

    python3 bench/cpu_engine_throughput.py [--repeats 11] [--scale 1.0] [--build-dir build] [--json FILE]

The kernels below are built with `kiln build --module`, then a fresh process
of the benchmark environment's Python (bench/.venv) imports them with
KILN_TARGET=cpu and times --repeats launches of each (after one warm-up
launch whose result is checked against NumPy's), host NumPy arrays in and
out, next to the same computation as NumPy array expressions, as an
`@numba.njit` loop and as an `@numba.njit(parallel=True)` loop with
`prange` (the yardsticks use all cores the engine uses):

* saxpy: out = a * x + y over 10^7 float32, one thread an element, blocks of
  256: a memory-bound kernel;
* stencil: a 5-point average over the interior of a 2048 x 2048 float32
  grid, one thread a point, blocks of (32, 8);
* block_sum: per block of 256 threads, the sum of its 256 float32 elements
  by a shared-memory tree with `cuda.syncthreads()` after each level,
  over 2^22 elements; next to it the same kernel without the barriers
  (block_sum_unsynchronized: its results are wrong, its time is the cost of
  the same work without waiting) and the same kernel with a
  `cuda.syncwarp()` after the tree, which makes the engine run its threads
  as fibers (block_sum_fibers, the way every synchronizing kernel ran
  before barrier regions);
* block_sum_constant and block_sum_levels: the same tree from a constant
  step, `step = 128` halved by a `while`, and `step = 128 >> level` in a
  `for` over 8 levels, each next to its kernel without the barriers.

Reported: the median, fastest and slowest run of each; ratios use the
medians.
"""

import argparse
import json
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402

BLOCK_SUM = '''
@cuda.jit("void(float32[::1], float32[::1])")
def {name}(x, out):
    shared = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    shared[tid] = x[cuda.grid(1)]
    {barrier}
    {tree}
    {after_tree}
    if tid == 0:
        out[cuda.blockIdx.x] = shared[0]

'''

# The tree's levels: from half the block, as a `while` from a constant step,
# and as a `for` over a fixed number of levels.
TREES = {
    "block_sum": '''step = cuda.blockDim.x // 2
    while step > 0:
        if tid < step:
            shared[tid] += shared[tid + step]
        {barrier}
        step //= 2''',
    "block_sum_constant": '''step = 128
    while step > 0:
        if tid < step:
            shared[tid] += shared[tid + step]
        {barrier}
        step //= 2''',
    "block_sum_levels": '''for level in range(8):
        step = 128 >> level
        if tid < step:
            shared[tid] += shared[tid + step]
        {barrier}''',
}


def block_sum_kernel(tree, name, barrier, after_tree="pass"):
    return BLOCK_SUM.format(name=name, barrier=barrier, after_tree=after_tree,
                            tree=TREES[tree].format(barrier=barrier))


KERNELS = '''
from numba import cuda, float32


@cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def stencil(grid, out):
    x, y = cuda.grid(2)
    if 0 < y < grid.shape[0] - 1 and 0 < x < grid.shape[1] - 1:
        out[y, x] = float32(0.25) * (grid[y - 1, x] + grid[y + 1, x] + grid[y, x - 1] + grid[y, x + 1])


''' + "".join(
    block_sum_kernel(tree, tree + suffix, barrier)
    for tree in TREES
    for suffix, barrier in [("", "cuda.syncthreads()"), ("_unsynchronized", "pass")]
) + block_sum_kernel("block_sum", "block_sum_fibers", "cuda.syncthreads()", "cuda.syncwarp()")


def worker(options):
    import numba
    import numpy as np

    module = __import__(options.module)

    @numba.njit
    def saxpy_njit(a, x, y, out):
        for i in range(out.size):
            out[i] = a * x[i] + y[i]

    @numba.njit(parallel=True)
    def saxpy_parallel(a, x, y, out):
        for i in numba.prange(out.size):
            out[i] = a * x[i] + y[i]

    @numba.njit
    def stencil_njit(grid, out):
        for y in range(1, grid.shape[0] - 1):
            for x in range(1, grid.shape[1] - 1):
                out[y, x] = np.float32(0.25) * (grid[y - 1, x] + grid[y + 1, x] + grid[y, x - 1] + grid[y, x + 1])

    @numba.njit(parallel=True)
    def stencil_parallel(grid, out):
        for y in numba.prange(1, grid.shape[0] - 1):
            for x in range(1, grid.shape[1] - 1):
                out[y, x] = np.float32(0.25) * (grid[y - 1, x] + grid[y + 1, x] + grid[y, x - 1] + grid[y, x + 1])

    @numba.njit
    def block_sum_njit(x, out):
        for b in range(out.size):
            total = np.float32(0)
            for t in range(256):
                total += x[b * 256 + t]
            out[b] = total

    @numba.njit(parallel=True)
    def block_sum_parallel(x, out):
        for b in numba.prange(out.size):
            total = np.float32(0)
            for t in range(256):
                total += x[b * 256 + t]
            out[b] = total

    rng = np.random.default_rng(1)
    n = int(10**7 * options.scale)
    a = np.float32(2.5)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    side = max(64, int(2048 * options.scale ** 0.5))
    grid = rng.random((side, side), dtype=np.float32)
    smooth = np.zeros_like(grid)
    blocks = max(16, int(2**14 * options.scale))
    values = rng.random(blocks * 256, dtype=np.float32)
    sums = np.zeros(blocks, np.float32)

    def numpy_stencil():
        smooth[1:-1, 1:-1] = np.float32(0.25) * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:])

    block_sum_yardsticks = {
        "NumPy": lambda: np.sum(values.reshape(blocks, 256), axis=1, out=sums),
        "njit": lambda: block_sum_njit(values, sums),
        "njit parallel": lambda: block_sum_parallel(values, sums),
        "check": lambda: np.allclose(sums, values.reshape(blocks, 256).sum(axis=1), rtol=1e-4),
    }
    cases = {
        "saxpy": {
            "size": f"{n:,} float32",
            "Kiln": lambda: module.saxpy[(n + 255) // 256, 256](a, x, y, out),
            "NumPy": lambda: np.add(np.multiply(a, x), y, out=out),
            "njit": lambda: saxpy_njit(a, x, y, out),
            "njit parallel": lambda: saxpy_parallel(a, x, y, out),
            "check": lambda: np.allclose(out, a * x + y),
        },
        "stencil": {
            "size": f"{side} x {side} float32",
            "Kiln": lambda: module.stencil[((side + 31) // 32, (side + 7) // 8), (32, 8)](grid, smooth),
            "NumPy": numpy_stencil,
            "njit": lambda: stencil_njit(grid, smooth),
            "njit parallel": lambda: stencil_parallel(grid, smooth),
            "check": lambda: np.allclose(smooth[1:-1, 1:-1], np.float32(0.25) * (
                grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:])),
        },
        "block_sum": {
            "size": f"{blocks * 256:,} float32, blocks of 256",
            "Kiln": lambda: module.block_sum[blocks, 256](values, sums),
            "Kiln, without barriers": lambda: module.block_sum_unsynchronized[blocks, 256](values, sums),
            "Kiln, as fibers": lambda: module.block_sum_fibers[blocks, 256](values, sums),
            **block_sum_yardsticks,
        },
    }
    # The same tree from a constant step: a `while`, and a `for` over levels.
    for tree in ("block_sum_constant", "block_sum_levels"):
        cases[tree] = {
            "size": f"{blocks * 256:,} float32, blocks of 256",
            "Kiln": lambda kernel=getattr(module, tree): kernel[blocks, 256](values, sums),
            "Kiln, without barriers":
                lambda kernel=getattr(module, tree + "_unsynchronized"): kernel[blocks, 256](values, sums),
            **block_sum_yardsticks,
        }
    results = {}
    for case, runs in cases.items():
        results[case] = {"size": runs["size"], "times": {}}
        for name, run in runs.items():
            if name in ("size", "check"):
                continue
            run()
            if name in ("Kiln", "Kiln, as fibers") and not runs["check"]():
                raise SystemExit(f"{case}: {name} computed a wrong result")
            times = []
            for _ in range(options.repeats):
                start = time.perf_counter()
                run()
                times.append(time.perf_counter() - start)
            results[case]["times"][name] = times
    print(json.dumps(results))


def show(seconds):
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--scale", type=float, default=1.0, help="problem sizes relative to the defaults")
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--module", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        return worker(options)

    results, version = bc.run_cpu_worker(__file__, KERNELS, "cpu_throughput_kernels", options.build_dir,
                                         ["--repeats", str(options.repeats), "--scale", str(options.scale)])
    load = bc.load_average()
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {load}")
    print(f"# median of {options.repeats} runs (fastest – slowest); host NumPy arrays, KILN_TARGET=cpu\n")
    print("| kernel | size | implementation | median | fastest – slowest | ÷ Kiln |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for case, measured in results.items():
        kiln_median = statistics.median(measured["times"]["Kiln"])
        for name, times in measured["times"].items():
            print(f"| {case} | {measured['size']} | {name} | {show(statistics.median(times))} | "
                  f"{show(min(times))} – {show(max(times))} | {statistics.median(times) / kiln_median:.2f}x |")
    bc.write_json(options.json, {"repeats": options.repeats, "scale": options.scale, "load_average": load,
                                 "results": results})


if __name__ == "__main__":
    main()
