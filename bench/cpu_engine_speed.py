"""The CPU engine on the seed kernels, next to Numba's CUDA simulator and NumPy.

    bash bench/setup.sh      # once: bench/.venv with numba, numba-cuda, numpy
    python3 bench/cpu_engine_speed.py [--repeats 11] [--stat min] [--scale 1] [--sim-scale 4]
                                      [--only vector_add,mandelbrot] [--build-dir build] [--json FILE]

The kernels, their inputs, launch configurations and NumPy versions are in
bench/cpu_engine_cases.py. Three fresh processes of bench/.venv's Python:

* Kiln: each example built once with `kiln build --module` (build time not
  counted) and imported with KILN_TARGET=cpu, through the runtime of the
  build folder (build/python), one
  warm-up launch whose result is checked against NumPy's, then the fastest of
  --repeats launches (Numba-style `kernel[grid, block](...)`, ufunc and
  reduction calls, host NumPy arrays in and out). The engine runs blocks on
  one worker thread per core. Reported: the fastest of the --repeats runs
  (--stat median for the median), because other work on a shared machine
  only ever adds time, and hurts the engine's two workers more than
  single-threaded NumPy.
* NumPy: a vectorized NumPy version of the same computation on the same
  data, same statistic.
* Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): the same examples and
  launches at small sizes (--sim-scale times the defaults), fastest of
  --sim-repeats. It runs every CUDA thread as a Python thread, so it is
  compared per element (or pixel, sample, thread).

Sizes: 2^20 elements for most kernels (1536x1024 pixels for mandelbrot,
16.4M samples for monte_carlo_pi); the simulator gets 8,192 elements times
--sim-scale (fewer for a few, see the table).
"""

import argparse
import json
import pathlib
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402


def worker(python, engine, options, env):
    command = [python, str(bc.BENCH / "cpu_engine_cases.py"), engine,
               "--scale", str(options.scale if engine == "kiln" else options.sim_scale),
               "--repeats", str(options.repeats if engine == "kiln" else options.sim_repeats)]
    if options.only:
        command += ["--only", options.only]
    _, stdout = bc.timed_run(command, env=env)
    results = {r["case"]: r for r in map(json.loads, (line for line in stdout.splitlines() if line.startswith("{")))}
    pick = min if options.stat == "min" else bc.median
    for r in results.values():
        for side in ("kiln", "numpy", "sim"):
            if f"{side}_times" in r:
                r[f"{side}_s"] = pick(r[f"{side}_times"])
    return results


def per_unit(seconds, units):
    ns = seconds / units * 1e9
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.2f} ns"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--scale", type=float, default=1.0, help="size factor for Kiln and NumPy")
    parser.add_argument("--sim-scale", type=float, default=4.0, help="size factor for the simulator")
    parser.add_argument("--sim-repeats", type=int, default=1)
    parser.add_argument("--only", help="comma-separated case or example names")
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()),
                        help="Kiln build folder with driver/kiln and python/kiln (or $KILN_BUILD_DIR)")
    parser.add_argument("--no-sim", action="store_true")
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--stat", choices=["min", "median"], default="min",
                        help="which of the --repeats times to report (default: the fastest, the least "
                             "disturbed by other work on the machine)")
    options = parser.parse_args()

    python = bc.require_bench_python()
    private = tempfile.TemporaryDirectory(prefix="kiln-bench-runtime-")
    build_dir = pathlib.Path(options.build_dir)
    kiln = bc.snapshot(build_dir / "driver" / "kiln", private.name)
    # The runtime package, copied (its .py files are symlinks into the source tree).
    package = pathlib.Path(private.name) / "python"
    shutil.copytree(build_dir / "python", package, symlinks=False)
    modules = pathlib.Path(private.name) / "modules"
    modules.mkdir()
    print(f"command: {bc.command_line()}")
    print(f"machine: {bc.machine_line()}; load average {bc.load_average()} at start")

    env = bc.bench_env(KILN=kiln, KILN_BENCH_MODULES=str(modules), KILN_TARGET="cpu", PYTHONPATH=str(package))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    # Set on some machines for old OpenBLAS builds; they only slow NumPy down (BLAS is not used here).
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    kiln = worker(python, "kiln", options, env)
    sim = {} if options.no_sim else worker(python, "sim", options, dict(env, NUMBA_ENABLE_CUDASIM="1"))
    bc.write_json(options.json, {"repeats": options.repeats, "sim_repeats": options.sim_repeats,
                                 "scale": options.scale, "sim_scale": options.sim_scale, "stat": options.stat,
                                 "load_average_end": bc.load_average(), "kiln": kiln, "sim": sim})
    print(f"load average {bc.load_average()} at end; {options.stat} of {options.repeats} runs "
          f"(simulator: {options.sim_repeats})\n")

    rows = []
    failures = {}
    for name, k in kiln.items():
        units = k["size"]
        numpy_s = k.get("numpy_s")
        s = sim.get(name, {})
        sim_cell = sim_ratio = "-"
        if "sim_s" in s:
            sim_cell = f"{per_unit(s['sim_s'], s['size'])} ({s['size']:,})"
            sim_ratio = f"{(s['sim_s'] / s['size']) / (k['kiln_s'] / units):,.0f}x"
        elif "sim_error" in s:
            sim_cell = "fails (see below)"
            failures.setdefault(s["sim_error"], []).append(name)
        rows.append([name, k["config"], f"{units:,} {k['unit']}s", bc.ms(k["kiln_s"], 2), per_unit(k["kiln_s"], units),
                     bc.ms(numpy_s, 2) if numpy_s else "-", per_unit(numpy_s, units) if numpy_s else "-",
                     f"{numpy_s / k['kiln_s']:.2f}x" if numpy_s else "-", sim_cell, sim_ratio, k["check"]])
    print(bc.table(["kernel", "launch", "size", "Kiln", "Kiln /unit", "NumPy", "NumPy /unit",
                    "NumPy ÷ Kiln", "simulator /unit (size)", "simulator ÷ Kiln, per unit", "Kiln result"],
                   rows, "lllrrrrrrrl"))
    for error, names in failures.items():
        print(f"\nThe simulator fails on {', '.join(names)}: {error}")
    compile_times = {k["example"]: k["compile_s"] for k in kiln.values()}
    print("\nkiln build --module time per example (not counted above): " +
          ", ".join(f"{e} {bc.ms(t)}" for e, t in compile_times.items()))
    if any(k["example"] == "reductions" for k in kiln.values()) and sim:
        print("The simulator's cuda.reduce is Python's functools.reduce over the array: no kernel runs.")


if __name__ == "__main__":
    main()
