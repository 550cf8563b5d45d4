"""Runs every benchmark of bench/ and writes docs/benchmarks.md.

    python3 bench/run.py [--smoke] [--only NAME,...] [--output docs/benchmarks.md]
                         [--bench-python PATH] [--build-dir build] [--results bench/out/run.json]
    python3 bench/run.py --render-only bench/out/run.json   # re-render, measuring nothing
    python3 bench/run.py --only firstcall --update           # measure one figure, keep the others

NAMEs (the figures, in order): compile, build, scale, startup, firstcall,
imports, dispatch, registers, cpu, checks, launch, throughput, polls, check, remote,
storage. --update measures the --only figures and
keeps the others from the results of the last run (--results), saying so in
the document. Each figure is one script of bench/, run in its own
process with --json; this script only chooses their arguments, collects
their structured results and renders them, with the hand-written
explanations of bench/templates/NAME.md, into one Markdown file, and
bench/plots.py draws the plots it shows (SVG, in a `benchmarks/` folder
beside it; not in --smoke runs).

Before measuring, `bash bench/setup.sh` makes or checks bench/.venv (numba,
numba-cuda and NumPy from the package registry), unless --bench-python names
an environment that has them already.

--smoke: one repeat, no warm-up, the smallest sizes and one example per
figure, written to a temporary file unless --output is given; it exists so
that CI can check that the harness still runs (tests/bench/). Its numbers
mean nothing.
"""

import argparse
import datetime
import json
import os
import pathlib
import platform
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402
import report  # noqa: E402

FIGURES = ["compile", "build", "scale", "startup", "firstcall", "imports", "dispatch", "registers", "cpu",
           "checks", "launch", "throughput", "polls", "check", "remote", "storage"]

# name -> (script, full-run arguments, smoke arguments)
ARGUMENTS = {
    "compile": ("compile_speed.py", ["--repeats", "3", "--warmups", "1"],
                ["--repeats", "1", "--warmups", "0", "--examples", "vector_add", "--no-curand"]),
    "build": ("cache_speed.py", ["--repeats", "3", "--warmups", "1", "--jobs", "1,2", "--kernels", "20"],
              ["--repeats", "1", "--warmups", "0", "--jobs", "1,2", "--kernels", "2"]),
    "scale": ("build_scale.py", ["--kernels", "100,500", "--repeats", "1"],
              ["--kernels", "2", "--repeats", "1"]),
    "startup": ("runtime_startup.py", ["--repeats", "9", "--warmups", "1"],
                ["--repeats", "1", "--warmups", "0", "--elements", "4096", "--sim-elements", "256"]),
    "firstcall": ("first_call.py", ["--repeats", "9", "--calls", "20000"],
                  ["--repeats", "1", "--warmups", "0", "--calls", "200"]),
    "imports": ("runtime_startup.py", ["--import-kernels", "1,100,500", "--repeats", "15", "--warmups", "1"],
                ["--import-kernels", "1,2", "--repeats", "1", "--warmups", "0"]),
    "dispatch": ("dispatch_overhead.py", ["--calls", "200000", "--repeats", "7"],
                 ["--calls", "2000", "--repeats", "1"]),
    "registers": ("register_usage.py", ["--archs", "75,80,90"],
                  ["--archs", "80", "--examples", "vector_add"]),
    "cpu": ("cpu_engine_speed.py", ["--repeats", "11", "--stat", "min"],
            ["--repeats", "1", "--only", "vector_add", "--scale", "0.01", "--sim-scale", "0.05"]),
    "checks": ("cpu_engine_index_checks.py", ["--rounds", "5", "--repeats", "11"],
               ["--rounds", "1", "--repeats", "1", "--only", "vector_add"]),
    "polls": ("cpu_interrupt_polls.py", ["--rounds", "5", "--repeats", "11"],
              ["--rounds", "1", "--repeats", "1", "--scale", "0.01"]),
    "launch": ("cpu_launch_overhead.py", ["--calls", "20000", "--repeats", "11"],
               ["--calls", "200", "--repeats", "1"]),
    "throughput": ("cpu_engine_throughput.py", ["--repeats", "11"],
                   ["--repeats", "1", "--scale", "0.01"]),
    "check": ("check_speed.py", ["--lines", "2000", "--repeats", "30", "--warmups", "3", "--memory",
                                 "--memory-repeats", "3"],
              ["--lines", "2000", "--repeats", "1", "--warmups", "0", "--memory", "--memory-repeats", "1"]),
    "remote": ("remote_cache.py", ["--repeats", "15", "--warmups", "1", "--kernels", "20"],
               ["--repeats", "1", "--warmups", "0", "--kernels", "2", "--arch", "80", "--delay", "0.3"]),
    "storage": ("cache_storage.py", ["--kernels", "20", "--rows", "20000"],
                ["--kernels", "2", "--arch", "80", "--rows", "2000"]),
}


def kiln_arguments(name, build_dir):
    """How each script is told which Kiln to run."""
    if name in ("startup", "firstcall", "imports", "dispatch", "cpu", "checks", "polls", "launch", "throughput"):
        return ["--build-dir", str(build_dir)]
    return ["--kiln", str(build_dir / "driver" / "kiln")]


def ensure_bench_python(options):
    if options.bench_python:
        return str(pathlib.Path(options.bench_python).absolute())
    print("==> bash bench/setup.sh", file=sys.stderr, flush=True)
    subprocess.run(["bash", str(bc.BENCH / "setup.sh")], check=True, stdout=sys.stderr)
    return str(bc.BENCH_PYTHON)


def package_versions(python):
    code = ("from importlib.metadata import version as v\n"
            "print(f\"numba {v('numba')}, numba-cuda {v('numba-cuda')}, NumPy {v('numpy')}, "
            "Python {__import__('platform').python_version()}\")")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or "versions unknown"


def build_description(build_dir):
    """The build type and compiler of the Kiln under test, from its CMake cache."""
    found = {}
    try:
        for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
            key, _, value = line.partition("=")
            found[key.split(":")[0]] = value
    except OSError:
        return str(build_dir)
    compiler = pathlib.Path(found.get("CMAKE_CXX_COMPILER", "?")).name
    return f"{build_dir.name}/: {found.get('CMAKE_BUILD_TYPE') or 'no build type'}, {compiler}"


def run_figure(name, options, env, work):
    script, full, smoke = ARGUMENTS[name]
    out = pathlib.Path(work) / f"{name}.json"
    arguments = (smoke if options.smoke else full) + kiln_arguments(name, options.build_dir)
    command = [sys.executable, str(bc.BENCH / script), *arguments, "--json", str(out)]
    shown = shlex.join(["python3", f"bench/{script}", *(smoke if options.smoke else full)])
    load_before = bc.load_average()
    print(f"==> {name}: {shown}", file=sys.stderr, flush=True)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=bc.ROOT, stdout=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or not out.exists():
        return {"name": name, "command": shown, "error": f"exit status {done.returncode}",
                "output": done.stdout[-3000:], "seconds": elapsed}
    return {"name": name, "command": shown, "data": json.loads(out.read_text()), "seconds": elapsed,
            "load": (load_before, bc.load_average()), "output": done.stdout}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="one repeat, smallest sizes (CI)")
    parser.add_argument("--only", help="comma-separated figures: " + ",".join(FIGURES))
    parser.add_argument("--output", help="default: docs/benchmarks.md (with --smoke: a temporary file)")
    parser.add_argument("--bench-python", help="a Python with numba and numba-cuda; skips bench/setup.sh")
    parser.add_argument("--build-dir", type=pathlib.Path, default=bc.default_build_dir())
    parser.add_argument("--results", type=pathlib.Path,
                        help="where to keep the raw results (default: bench/out/run.json; smoke: next to --output)")
    parser.add_argument("--update", action="store_true",
                        help="keep the figures not in --only from the results of the last run")
    parser.add_argument("--render-only", type=pathlib.Path, metavar="RESULTS",
                        help="render the raw results of an earlier run again (after editing bench/templates), "
                             "measuring nothing")
    options = parser.parse_args()
    options.build_dir = options.build_dir.absolute()
    only = options.only.split(",") if options.only else FIGURES
    unknown = [n for n in only if n not in FIGURES]
    if unknown:
        parser.error(f"unknown figure(s) {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    if options.output:
        output = pathlib.Path(options.output)
    elif options.smoke:
        output = pathlib.Path(tempfile.mkdtemp(prefix="kiln-bench-smoke-")) / "benchmarks.md"
    else:
        output = bc.ROOT / "docs" / "benchmarks.md"

    if options.render_only:
        saved = json.loads(options.render_only.read_text())
        output.write_text(report.render(saved["context"], saved["results"]))
        print(output)
        return 0
    results_file = options.results or (output.with_suffix(".json") if options.smoke else bc.BENCH / "out" / "run.json")
    if options.update and not results_file.exists():
        # Said before measuring: the figures kept come from that file.
        parser.error(f"--update keeps the figures of the last run, and {results_file} holds none; "
                     "run without --update (every figure), or name a run's results with --results")

    python = ensure_bench_python(options)
    env = dict(bc.bench_env(KILN_BENCH_PYTHON=python, KILN_BUILD_DIR=str(options.build_dir)))
    version = bc.wait_for_kiln(str(options.build_dir / "driver" / "kiln"))
    context = {
        "command": shlex.join(["python3", "bench/run.py", *sys.argv[1:]]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": bc.cpu_model(),
        "platform": platform.platform(terse=True),
        "kiln": version,
        "build": build_description(options.build_dir),
        "ptxas": bc.ptxas_version(),
        "numba": package_versions(python),
        "load_start": bc.load_average(),
        "smoke": options.smoke,
    }
    results = []
    with tempfile.TemporaryDirectory(prefix="kiln-bench-run-") as work:
        for name in only:
            results.append(run_figure(name, options, env, work))
    context["load_end"] = bc.load_average()
    if options.update:
        saved = json.loads(results_file.read_text())
        kept = {r["name"]: r for r in saved["results"] if r["name"] not in only}
        measured = {r["name"]: r for r in results}
        results = [kept.get(name) or measured[name] for name in FIGURES if name in kept or name in measured]
        # A figure re-measured again replaces its earlier re-measurement.
        updates = [u for u in saved["context"].get("updates", []) if set(u["figures"]) - set(only)]
        updates.append({"figures": only, "date": context["date"], "command": context["command"]})
        context = dict(saved["context"], updates=updates)
    output.parent.mkdir(parents=True, exist_ok=True)
    results_file.parent.mkdir(parents=True, exist_ok=True)
    results_file.write_text(json.dumps({"context": context, "results": results}, indent=1))
    output.write_text(report.render(context, results))
    if not options.smoke:
        subprocess.run([python, str(bc.BENCH / "plots.py"), str(results_file), str(output.parent / "benchmarks")],
                       check=True, stdout=sys.stderr)
    failed = [r["name"] for r in results if "error" in r]
    print(f"wrote {output}" + (f"; failed: {', '.join(failed)}" if failed else ""), file=sys.stderr)
    print(output)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
