"""From `import` of a built kernel module to its first finished launch,
next to `import numba` plus the compilation Numba's first call of the same
kernel does.

    bash bench/setup.sh      # once: bench/.venv with numba, numba-cuda, numpy
    python3 bench/runtime_startup.py [--repeats 15] [--example vector_add --kernel vector_add]
                                     [--elements 1048576] [--sim-elements 4096] [--build-dir build]
                                     [--json FILE]

The example is built once with `kiln build --module` (default architectures),
and the runtime package is copied and byte-compiled, as `pip install` leaves
it. Then fresh processes of bench/.venv's Python, NumPy imported and the
input arrays made before the clock starts (both sides need them), each
timing in process:

* Kiln, CPU engine (KILN_TARGET=cpu): `import <module>` (which imports the
  runtime, verifies the manifest's checksum and outline and registers its kernels), then
  the first launch on 2^20 float32 elements, until it has finished.
* Kiln, CUDA path (KILN_TARGET=cuda through the stand-in driver library the
  tests build): the same, where the first launch loads the specialization's
  fat binary into the (stand-in) driver and ends with cuda.synchronize().
  The stand-in does not run the kernel, so this is the runtime's own cost.
* Numba: `from numba import cuda`, the example's module (its @cuda.jit
  decorators), then what a first call compiles: `compile_ptx` for sm_80 and
  ptxas for sm_80 (the driver's JIT would do this step on a GPU). No GPU is
  here, so Numba's launch itself is not counted: its real figure is higher.

* Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), the yardstick where no
  GPU exists: `from numba import cuda`, the example's module, then the
  first call of the kernel, until it has finished, on --sim-elements
  elements (it runs every CUDA thread as a Python thread); Kiln's CPU
  engine is timed on the same size for the ratio.

Reported: median and fastest of --repeats processes, and the ratio of the
medians. The whole-process wall time (interpreter start included) is shown
too.

    python3 bench/runtime_startup.py --import-kernels 1,100,500 [--repeats 15]

measures instead what importing a built module costs by its number of
kernels: for each N, a module of N one-line kernels (each its own fat
binary) is built, and fresh processes (NumPy and the kiln runtime imported
before the clock) time `import <module>` (wall time, and the thread's CPU
time, which a loaded machine inflates less) and read the resident set size
(/proc/self/statm) before and after it, on the CPU engine (KILN_TARGET=cpu).
Reported: median (min - max) of each time and the median RSS growth.
"""

import argparse
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402

sys.path.insert(0, str(bc.ROOT / "tests" / "runtime" / "python"))
from kernel_module_sources import many_kernels_source  # noqa: E402

ELEMENTS = 1 << 20


def kiln_worker(options):
    import numpy as np

    ELEMENTS = options.elements
    x = np.arange(ELEMENTS, dtype=np.float32)
    y = 2 * x
    r = np.zeros_like(x)
    start = time.perf_counter()
    module = __import__(options.module)
    kernel = getattr(module, options.kernel)
    imported = time.perf_counter()
    kernel[(ELEMENTS + 255) // 256, 256](r, x, y)
    import kiln.cuda

    kiln.cuda.synchronize()
    finished = time.perf_counter()
    if os.environ.get("KILN_TARGET") == "cpu" and not np.array_equal(r, x + y):
        raise SystemExit("the first launch computed a wrong result")
    print(json.dumps({"import_s": imported - start, "first_launch_s": finished - start}))


def import_worker(options):
    """One import of a built module: its wall time and the RSS it adds."""
    import numpy  # noqa: F401 - imported before the clock, as every user has
    import kiln._loader  # noqa: F401
    import kiln._runtime  # noqa: F401

    def resident_bytes():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    before = resident_bytes()
    start, start_cpu = time.perf_counter(), time.thread_time()
    module = __import__(options.module)
    imported, imported_cpu = time.perf_counter(), time.thread_time()
    after = resident_bytes()
    kernels = sum(1 for name in vars(module) if name.startswith("k"))
    print(json.dumps({"import_s": imported - start, "import_cpu_s": imported_cpu - start_cpu,
                      "rss_bytes": after - before, "kernels": kernels}))


def import_scaling(options):
    python = bc.require_bench_python()
    build_dir = pathlib.Path(options.build_dir)
    kiln = str(build_dir / "driver" / "kiln")
    version = bc.wait_for_kiln(kiln)
    counts = [int(count) for count in options.import_kernels.split(",")]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="kiln-bench-import-") as folder:
        package = pathlib.Path(folder) / "python"
        shutil.copytree(build_dir / "python", package, symlinks=False)
        bc.timed_run([python, "-m", "compileall", "-q", str(package)])
        script = str(pathlib.Path(__file__).resolve())
        for count in counts:
            module = f"kernels_{count}"
            source = pathlib.Path(folder) / f"{module}.py"
            source.write_text(many_kernels_source(count))
            bc.timed_run([kiln, "build", source, "--module", module, "-o", folder, "--python", python, "-q"])
            source.unlink()  # the built module, not the source, is imported
            env = bc.bench_env(PYTHONPATH=os.pathsep.join([str(package), folder]), KILN_TARGET="cpu")
            rows[count] = measure([python, script, "--worker", "import", "--module", module], env,
                                  options.repeats, options.warmups)
            if any(row["kernels"] != count for row in rows[count]):
                raise SystemExit(f"the module of {count} kernels does not hold {count} kernels")
            print(f"  {count} kernels done", file=sys.stderr)
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {bc.load_average()}; {options.repeats} processes each\n")
    print("| kernels | import, wall (median) | (min – max) | import, CPU (median) | (min – max) "
          "| RSS growth (median) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for count, measured in rows.items():
        times = [row["import_s"] * 1e3 for row in measured]
        cpu = [row["import_cpu_s"] * 1e3 for row in measured]
        rss = bc.median([row["rss_bytes"] / 2**20 for row in measured])
        print(f"| {count} | {bc.median(times):.2f} ms | {min(times):.2f} – {max(times):.2f} ms "
              f"| {bc.median(cpu):.2f} ms | {min(cpu):.2f} – {max(cpu):.2f} ms | {rss:.2f} MB |")
    bc.write_json(options.json, {"import_kernels": counts, "repeats": options.repeats, "warmups": options.warmups,
                                 "results": rows})


def numba_worker(options):
    import numpy as np  # noqa: F401 - imported before the clock, as on Kiln's side

    start = time.perf_counter()
    from numba import cuda

    import numba_side

    numba_side._install_patches()
    module = numba_side._import_example(options.example)
    imported = time.perf_counter()
    stems = [s for s in numba_side.specs_of(options.example) if s[2] == options.kernel]
    stem, kind, function, signature = stems[0]
    pyfunc, sig, kernel_options = numba_side._resolve(module, kind, function, signature)
    ptx, _ = cuda.compile_ptx(pyfunc, sig, cc=(8, 0), **numba_side._compile_options(kernel_options))
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / f"{stem}.ptx"
        path.write_text(ptx)
        numba_side.run_ptxas(path, 80, numba_side.ptxas_flags(kernel_options))
    finished = time.perf_counter()
    print(json.dumps({"import_s": imported - start, "first_launch_s": finished - start}))


def sim_worker(options):
    """Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): `from numba import
    cuda`, the example's module, then its first call, until it has finished."""
    import numpy as np

    elements = options.elements
    x = np.arange(elements, dtype=np.float32)
    y = 2 * x
    r = np.zeros_like(x)
    start = time.perf_counter()
    from numba import cuda  # noqa: F401

    import numba_side

    module = numba_side._import_example(options.example)
    kernel = getattr(module, options.kernel)
    imported = time.perf_counter()
    kernel[(elements + 255) // 256, 256](r, x, y)
    finished = time.perf_counter()
    if not np.array_equal(r, x + y):
        raise SystemExit("the simulator's first launch computed a wrong result")
    print(json.dumps({"import_s": imported - start, "first_launch_s": finished - start}))


def stand_in_driver(build_dir):
    found = sorted(pathlib.Path(build_dir).glob("tests/runtime/stand_in_driver/*.so*"))
    if not found:
        raise SystemExit(f"no stand-in driver library under {build_dir}/tests/runtime/stand_in_driver")
    return str(found[0])


def measure(command, env, repeats, warmups=1):
    for _ in range(warmups):  # page cache and byte code: not what is measured
        bc.timed_run(command, env=env)
    rows = []
    for _ in range(repeats):
        wall, stdout = bc.timed_run(command, env=env)
        row = json.loads(stdout.strip().splitlines()[-1])
        row["process_s"] = wall
        rows.append(row)
    return rows


def summary(rows, key):
    values = [row[key] for row in rows]
    return bc.median(values), min(values)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--warmups", type=int, default=1, help="untimed processes per side first")
    parser.add_argument("--example", default="vector_add")
    parser.add_argument("--kernel", default="vector_add")
    parser.add_argument("--elements", type=int, default=ELEMENTS, help="elements of the Kiln launches")
    parser.add_argument("--sim-elements", type=int, default=4096,
                        help="elements of the simulator's launch and of the Kiln CPU row next to it")
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--import-kernels", metavar="N,N,...",
                        help="measure the import of built modules of N kernels instead")
    parser.add_argument("--worker", choices=["kiln", "numba", "sim", "import"], help=argparse.SUPPRESS)
    parser.add_argument("--module", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker == "kiln":
        return kiln_worker(options)
    if options.worker == "numba":
        return numba_worker(options)
    if options.worker == "sim":
        return sim_worker(options)
    if options.worker == "import":
        return import_worker(options)
    if options.import_kernels:
        return import_scaling(options)

    python = bc.require_bench_python()
    build_dir = pathlib.Path(options.build_dir)
    kiln = str(build_dir / "driver" / "kiln")
    version = bc.wait_for_kiln(kiln)
    with tempfile.TemporaryDirectory(prefix="kiln-bench-startup-") as folder:
        module = f"startup_{options.example}"
        bc.timed_run([kiln, "build", bc.ROOT / "examples" / f"{options.example}.py", "--module", module,
                      "-o", folder, "--python", python])
        package = pathlib.Path(folder) / "python"
        shutil.copytree(build_dir / "python", package, symlinks=False)
        bc.timed_run([python, "-m", "compileall", "-q", str(package)])
        script = str(pathlib.Path(__file__).resolve())
        kiln_command = [python, script, "--worker", "kiln", "--module", module, "--kernel", options.kernel]
        path = os.pathsep.join([str(package), folder])
        cpu_env = bc.bench_env(PYTHONPATH=path, KILN_TARGET="cpu")
        sim_env = bc.bench_env(PYTHONPATH=str(bc.BENCH), NUMBA_ENABLE_CUDASIM="1")
        sides = {
            CPU: (kiln_command + ["--elements", str(options.elements)], cpu_env),
            CPU_SMALL: (kiln_command + ["--elements", str(options.sim_elements)], cpu_env),
            SIM: ([python, script, "--worker", "sim", "--example", options.example, "--kernel", options.kernel,
                   "--elements", str(options.sim_elements)], sim_env),
            CUDA: (kiln_command + ["--elements", str(options.elements)],
                   bc.bench_env(PYTHONPATH=path, KILN_TARGET="cuda", KILN_CUDA_DRIVER=stand_in_driver(build_dir))),
            NUMBA: ([python, script, "--worker", "numba", "--example", options.example, "--kernel", options.kernel],
                    bc.bench_env(PYTHONPATH=str(bc.BENCH))),
        }
        results = {}
        for side, (command, env) in sides.items():
            results[side] = measure(command, env, options.repeats, options.warmups)
            print(f"  {side} done", file=sys.stderr)

    load = bc.load_average()
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {load}; {options.repeats} processes each")
    print(f"# {options.example}.{options.kernel}, {options.elements} float32 elements "
          f"(simulator: {options.sim_elements})\n")
    print("| side | import (median) | import → first finished launch (median) | (fastest) | whole process (median) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    labels = {CPU: f"{CPU}, {options.elements:,} elements", CPU_SMALL: f"{CPU}, {options.sim_elements:,} elements",
              SIM: f"{SIM}, {options.sim_elements:,} elements", CUDA: f"{CUDA}, {options.elements:,} elements",
              NUMBA: NUMBA}
    for side, rows in results.items():
        imported, _ = summary(rows, "import_s")
        first, fastest = summary(rows, "first_launch_s")
        process, _ = summary(rows, "process_s")
        print(f"| {labels[side]} | {imported * 1e3:.1f} ms | {first * 1e3:.1f} ms | {fastest * 1e3:.1f} ms | "
              f"{process * 1e3:.0f} ms |")
    sim_first, _ = summary(results[SIM], "first_launch_s")
    small_first, _ = summary(results[CPU_SMALL], "first_launch_s")
    print(f"\n{CPU}: {sim_first / small_first:.0f}x faster to a first finished launch than Numba's simulator")
    numba_first, _ = summary(results[NUMBA], "first_launch_s")
    for side in (CPU, CUDA):
        first, _ = summary(results[side], "first_launch_s")
        print(f"{side}: {numba_first / first:.0f}x faster to a first launch than Numba's import + compile")
    bc.write_json(options.json, {
        "example": options.example, "kernel": options.kernel, "elements": options.elements,
        "sim_elements": options.sim_elements, "repeats": options.repeats, "warmups": options.warmups,
        "load_average": load, "labels": labels, "results": results})


CPU = "Kiln, CPU engine"
CPU_SMALL = "Kiln, CPU engine (simulator's size)"
SIM = "Numba simulator"
CUDA = "Kiln, CUDA path (stand-in driver)"
NUMBA = "Numba (import, compile_ptx + ptxas for sm_80)"


if __name__ == "__main__":
    main()
