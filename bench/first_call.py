"""The first call of a kernel that specializes on demand (a module that
stays Python, `from kiln import cuda`), next to Numba's first call of the
same kernel; and what a launch costs a lazy kernel once it has its
specialization.

    bash bench/setup.sh      # once: bench/.venv with numba, numba-cuda, numpy
    python3 bench/first_call.py [--repeats 9] [--elements 4096] [--calls 20000] [--build-dir build]
                                [--json FILE]

Fresh processes of bench/.venv's Python, NumPy imported and the input
arrays made before the clock starts, each timing in process:

* Kiln, cold cache (a new KILN_CACHE_DIR per process): `import` of the
  module (`from kiln import cuda`, one `@cuda.jit` kernel without a
  signature), then the first call, which compiles the module in process
  (kiln._compiler: front end, LLVM, PTX for compute_80, host code for the
  CPU engine, the module linked) and launches on the CPU engine until it
  has finished; checked against NumPy.
* Kiln, warm cache (every process shares a cache one untimed process
  filled): the same; the first call finds its code in the cache.
* Numba: `from numba import cuda`, the same module written for Numba, then
  what Numba's first call compiles on a GPU: `compile_ptx` for sm_80 and
  ptxas for sm_80 (the driver's JIT does this step on a GPU). No GPU is
  here, so Numba's launch is not counted: its real figure is higher.

"import excluded" is the first call alone. Then, in the warm processes,
--calls launches of a one-element kernel through the lazy kernel and
through the kernel object it dispatches to (what a built module's kernel
is): the difference per launch is the lazy kernel's own cost.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402

KERNELS = """
from {package} import cuda


@cuda.jit
def vector_add(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x[i] + y[i]
"""


def kiln_worker(options):
    import numpy as np

    x = np.arange(options.elements, dtype=np.float32)
    y = 2 * x
    r = np.zeros_like(x)
    start = time.perf_counter()
    import first_call_kernels as module

    imported = time.perf_counter()
    module.vector_add[(options.elements + 255) // 256, 256](r, x, y)
    finished = time.perf_counter()
    if not np.array_equal(r, x + y):
        raise SystemExit("the first call computed a wrong result")
    row = {"import_s": imported - start, "first_call_s": finished - imported, "total_s": finished - start}
    if options.calls:
        row.update(launch_costs(module.vector_add, options.calls))
    print(json.dumps(row))


def launch_costs(lazy, calls):
    """Seconds per launch of one element: through the lazy kernel, and
    through the kernel object it dispatches to; fastest of 5 loops each."""
    import numpy as np

    r, x, y = (np.zeros(1, np.float32) for _ in range(3))
    [built] = lazy._compiled.values()
    costs = {}
    for name, kernel in (("lazy_launch_s", lazy), ("built_launch_s", built)):
        launch = kernel[1, 1]
        for _ in range(1000):
            launch(r, x, y)
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(calls):
                kernel[1, 1](r, x, y)
            best = min(best, (time.perf_counter() - start) / calls)
        costs[name] = best
    return costs


def numba_worker(options):
    import numpy as np  # noqa: F401 - imported before the clock, as on Kiln's side

    start = time.perf_counter()
    from numba import cuda, float32

    import first_call_kernels as module
    import numba_side

    imported = time.perf_counter()
    array = float32[::1]
    ptx, _ = cuda.compile_ptx(module.vector_add.py_func, (array, array, array), cc=(8, 0))
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "vector_add.ptx"
        path.write_text(ptx)
        numba_side.run_ptxas(path, 80, [])
    finished = time.perf_counter()
    print(json.dumps({"import_s": imported - start, "first_call_s": finished - imported,
                      "total_s": finished - start}))


def measure(command, env_of, repeats, warmups):
    for _ in range(warmups):
        bc.timed_run(command, env=env_of())
    rows = []
    for _ in range(repeats):
        wall, stdout = bc.timed_run(command, env=env_of())
        row = json.loads(stdout.strip().splitlines()[-1])
        row["process_s"] = wall
        rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--warmups", type=int, default=1, help="untimed processes per side first")
    parser.add_argument("--elements", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=20000, help="launches per loop for the launch cost")
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--worker", choices=["kiln", "numba"], help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker == "kiln":
        return kiln_worker(options)
    if options.worker == "numba":
        return numba_worker(options)

    python = bc.require_bench_python()
    build_dir = pathlib.Path(options.build_dir)
    version = bc.wait_for_kiln(str(build_dir / "driver" / "kiln"))
    script = str(pathlib.Path(__file__).resolve())
    with tempfile.TemporaryDirectory(prefix="kiln-bench-first-call-") as folder:
        folder = pathlib.Path(folder)
        package = folder / "python"
        shutil.copytree(build_dir / "python", package, symlinks=False)
        subprocess.run([python, "-m", "compileall", "-q", str(package)], check=True)
        for side, name in (("kiln", "kiln"), ("numba", "numba")):
            (folder / side).mkdir()
            (folder / side / "first_call_kernels.py").write_text(textwrap.dedent(KERNELS.format(package=name)))
        warm_cache = folder / "warm-cache"
        caches = iter(range(1_000_000))
        # A cache that exists but holds nothing of this module: filled by
        # the build of another one.
        other_cache = folder / "other-cache"
        (folder / "other").mkdir()
        (folder / "other" / "first_call_kernels.py").write_text(
            textwrap.dedent(KERNELS.format(package="kiln")).replace("x[i] + y[i]", "x[i] - y[i]"))
        subprocess.run([python, "-c", "import numpy as np, first_call_kernels as m; "
                        "a = np.ones(4, np.float32); m.vector_add[1, 4](a, a, a)"],
                       check=True, env=bc.bench_env(PYTHONPATH=os.pathsep.join([str(package), str(folder / "other")]),
                                                    KILN_TARGET="cpu", KILN_CACHE_DIR=str(other_cache)))
        shutil.rmtree(other_cache / "modules")

        def cold_cache():
            copy = folder / f"cold-cache-{next(caches)}"
            shutil.copytree(other_cache, copy)
            return copy

        def kiln_env(cache):
            path = os.pathsep.join([str(package), str(folder / "kiln")])
            return lambda: bc.bench_env(PYTHONPATH=path, KILN_TARGET="cpu",
                                        KILN_CACHE_DIR=str(cache() if callable(cache) else cache))

        kiln_command = [python, script, "--worker", "kiln", "--elements", str(options.elements)]
        sides = {
            COLD: (kiln_command + ["--calls", "0"], kiln_env(cold_cache)),
            WARM: (kiln_command + ["--calls", str(options.calls)], kiln_env(warm_cache)),
            NUMBA: ([python, script, "--worker", "numba"],
                    lambda: bc.bench_env(PYTHONPATH=os.pathsep.join([str(bc.BENCH), str(folder / "numba")]))),
        }
        results = {}
        for side, (command, env_of) in sides.items():
            # The warm side's warm-up process fills its cache.
            results[side] = measure(command, env_of, options.repeats, max(options.warmups, 1 if side == WARM else 0))
            print(f"  {side} done", file=sys.stderr)

    load = bc.load_average()
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {load}; {options.repeats} processes each\n")
    print("| side | import | first call | import + first call |")
    print("| --- | ---: | ---: | ---: |")
    for side, rows in results.items():
        print(f"| {side} | " + " | ".join(f"{bc.median([r[k] for r in rows]) * 1e3:.1f} ms"
                                           for k in ("import_s", "first_call_s", "total_s")) + " |")
    lazy = min(r["lazy_launch_s"] for r in results[WARM])
    built = min(r["built_launch_s"] for r in results[WARM])
    print(f"\nlaunch of one element: lazy kernel {lazy * 1e9:.0f} ns, the kernel it dispatches to "
          f"{built * 1e9:.0f} ns: {max(lazy - built, 0) * 1e9:.0f} ns of its own")
    bc.write_json(options.json, {
        "elements": options.elements, "calls": options.calls, "repeats": options.repeats,
        "warmups": options.warmups, "load_average": load, "results": results})


COLD = "Kiln, cold cache"
WARM = "Kiln, warm cache"
NUMBA = "Numba (import, compile_ptx + ptxas for sm_80; no launch)"


if __name__ == "__main__":
    main()
