"""What the CPU engine's index checks (and its interrupt polls) cost.

    bash bench/setup.sh      # once: bench/.venv with numba, numba-cuda, numpy
    python3 bench/cpu_engine_index_checks.py [--rounds 5] [--repeats 11] [--only vector_add,normalize]
                                             [--build-dir build] [--before-build-dir OTHER_BUILD] [--json FILE]

Runs the cases of bench/cpu_engine_cases.py on the CPU engine in fresh
processes, one per configuration and round, the configurations taking
turns so that other work on the machine hits them alike:

* checked: the default, every array index checked;
* unchecked: KILN_CPU_BOUNDSCHECK=0, the copy of each kernel without checks;

both from the same modules, built with --switchable-index-checks (a
default build holds only the checked copy);
* before (with --before-build-dir): a build of Kiln without index checks or
  interrupt polls, whose modules are built by its own kiln.

Every configuration builds its modules with an empty cache of its own.

Each case's figure is the fastest launch over all rounds (other work only
ever adds time). Reported: the times, checked ÷ unchecked (the cost of the
checks, which KILN_CPU_BOUNDSCHECK=0 removes) and unchecked ÷ before (what
remains: the interrupt polls on loop back-edges and the entry's choice).
"""

import argparse
import json
import pathlib
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402


def prepare(build_dir, folder):
    """kiln, the runtime package and a module folder of one build, copied."""
    folder.mkdir()
    kiln = bc.snapshot(build_dir / "driver" / "kiln", str(folder))
    package = folder / "python"
    shutil.copytree(build_dir / "python", package, symlinks=False)
    modules = folder / "modules"
    modules.mkdir()
    # A cache of its own: objects another build of the same version left in
    # the user's cache would hide what this build compiles.
    cache = folder / "cache"
    return bc.bench_env(KILN=kiln, KILN_BENCH_MODULES=str(modules), KILN_TARGET="cpu",
                        PYTHONPATH=str(package), KILN_CACHE_DIR=str(cache))


def run_cases(python, env, options):
    command = [python, str(bc.BENCH / "cpu_engine_cases.py"), "kiln", "--repeats", str(options.repeats)]
    if options.only:
        command += ["--only", options.only]
    _, stdout = bc.timed_run(command, env=env)
    results = (json.loads(line) for line in stdout.splitlines() if line.startswith("{"))
    return {r["case"]: min(r["kiln_times"]) for r in results}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--only", help="comma-separated case or example names")
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--before-build-dir", help="a build without index checks, to compare with")
    parser.add_argument("--json", help="also write the raw measurements here")
    options = parser.parse_args()

    python = bc.require_bench_python()
    private = tempfile.TemporaryDirectory(prefix="kiln-bench-checks-")
    root = pathlib.Path(private.name)
    env = prepare(pathlib.Path(options.build_dir), root / "current")
    env.pop("NUMBA_BOUNDSCHECK", None)
    env.pop("KILN_CPU_BOUNDSCHECK", None)
    env["KILN_BENCH_BUILD_FLAGS"] = "--switchable-index-checks"
    configurations = {"checked": env, "unchecked": dict(env, KILN_CPU_BOUNDSCHECK="0")}
    if options.before_build_dir:
        configurations["before"] = prepare(pathlib.Path(options.before_build_dir), root / "before")
    print(f"command: {bc.command_line()}")
    print(f"machine: {bc.machine_line()}; load average {bc.load_average()} at start")

    best = {name: {} for name in configurations}
    for _ in range(options.rounds):
        for name, environment in configurations.items():
            for case, seconds in run_cases(python, environment, options).items():
                best[name][case] = min(best[name].get(case, seconds), seconds)
    bc.write_json(options.json, {"rounds": options.rounds, "repeats": options.repeats, "best": best})
    print(f"load average {bc.load_average()} at end; fastest of {options.rounds} x {options.repeats} "
          f"launches per configuration\n")

    headers = ["kernel", "checked", "unchecked", "checked ÷ unchecked"]
    if "before" in best:
        headers += ["before", "unchecked ÷ before"]
    rows = []
    for case, checked in best["checked"].items():
        unchecked = best["unchecked"][case]
        row = [case, bc.ms(checked, 2), bc.ms(unchecked, 2), f"{checked / unchecked:.2f}"]
        if "before" in best:
            row += [bc.ms(best["before"][case], 2), f"{unchecked / best['before'][case]:.2f}"]
        rows.append(row)
    print(bc.table(headers, rows, "lrrrrr"[:len(headers)]))


if __name__ == "__main__":
    main()
