"""From `import` of a built kernel module to its first finished launch,
next to `import numba` plus the compilation Numba's first call of the same
kernel does.

    bash bench/setup.sh      # once: bench/.venv with numba, numba-cuda, numpy
    python3 bench/runtime_startup.py [--repeats 15] [--example vector_add --kernel vector_add]
                                     [--build-dir build]

The example is built once with `kiln build --module` (default architectures),
and the runtime package is copied and byte-compiled, as `pip install` leaves
it. Then fresh processes of bench/.venv's Python, NumPy imported and the
input arrays made before the clock starts (both sides need them), each
timing in process:

* Kiln, CPU engine (KILN_TARGET=cpu): `import <module>` (which imports the
  runtime, verifies the module's checksums and registers its kernels), then
  the first launch on 2^20 float32 elements, until it has finished.
* Kiln, CUDA path (KILN_TARGET=cuda through the stand-in driver library the
  tests build): the same, where the first launch loads the specialization's
  fat binary into the (stand-in) driver and ends with cuda.synchronize().
  The stand-in does not run the kernel, so this is the runtime's own cost.
* Numba: `from numba import cuda`, the example's module (its @cuda.jit
  decorators), then what a first call compiles: `compile_ptx` for sm_80 and
  ptxas for sm_80 (the driver's JIT would do this step on a GPU). No GPU is
  here, so Numba's launch itself is not counted: its real figure is higher.

Reported: median and fastest of --repeats processes, and the ratio of the
medians. The whole-process wall time (interpreter start included) is shown
too.
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

ELEMENTS = 1 << 20


def kiln_worker(options):
    import numpy as np

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


def stand_in_driver(build_dir):
    found = sorted(pathlib.Path(build_dir).glob("tests/runtime/stand_in_driver/*.so*"))
    if not found:
        raise SystemExit(f"no stand-in driver library under {build_dir}/tests/runtime/stand_in_driver")
    return str(found[0])


def measure(command, env, repeats):
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
    parser.add_argument("--example", default="vector_add")
    parser.add_argument("--kernel", default="vector_add")
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--worker", choices=["kiln", "numba"], help=argparse.SUPPRESS)
    parser.add_argument("--module", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker == "kiln":
        return kiln_worker(options)
    if options.worker == "numba":
        return numba_worker(options)

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
        results = {
            "Kiln, CPU engine": measure(kiln_command, bc.bench_env(PYTHONPATH=path, KILN_TARGET="cpu"),
                                        options.repeats),
            "Kiln, CUDA path (stand-in driver)": measure(
                kiln_command,
                bc.bench_env(PYTHONPATH=path, KILN_TARGET="cuda", KILN_CUDA_DRIVER=stand_in_driver(build_dir)),
                options.repeats),
            "Numba (import, compile_ptx + ptxas for sm_80)": measure(
                [python, script, "--worker", "numba", "--example", options.example, "--kernel", options.kernel],
                bc.bench_env(PYTHONPATH=str(bc.BENCH)), options.repeats),
        }

    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {bc.load_average()}; {options.repeats} processes each")
    print(f"# {options.example}.{options.kernel}, {ELEMENTS} float32 elements\n")
    print("| side | import (median) | import → first finished launch (median) | (fastest) | whole process (median) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for side, rows in results.items():
        imported, _ = summary(rows, "import_s")
        first, fastest = summary(rows, "first_launch_s")
        process, _ = summary(rows, "process_s")
        print(f"| {side} | {imported * 1e3:.1f} ms | {first * 1e3:.1f} ms | {fastest * 1e3:.1f} ms | "
              f"{process * 1e3:.0f} ms |")
    numba_first, _ = summary(results["Numba (import, compile_ptx + ptxas for sm_80)"], "first_launch_s")
    for side in ("Kiln, CPU engine", "Kiln, CUDA path (stand-in driver)"):
        first, _ = summary(results[side], "first_launch_s")
        print(f"\n{side}: {numba_first / first:.0f}x faster to a first launch than Numba's import + compile")


if __name__ == "__main__":
    main()
