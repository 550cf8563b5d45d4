"""Runs numba-cuda's own kernel tests (`numba/cuda/tests/cudapy/` of the
installed numba-cuda) twice: on Numba's CUDA simulator, then with Kiln
standing in for the simulator's compiler (kiln_stand_in.py), and writes
what Kiln passes of what the simulator passes, file by file.

    .venv/bin/python tests/conformance/run_suite.py [--jobs N] [--only test_array,...]
        [--report docs/conformance.md] [--json FILE]

Each test file runs in processes of its own (run_module.py), so that a
crash loses only that file's remaining tests, which are then reported as
crashed. Tests of Numba's internals, which no other compiler could pass,
are left out of the count, each with its reason (numba_internals.py); each
test Kiln fails is shown with why, where the gap is known (known_gaps.py).
"""

import argparse
import collections
import concurrent.futures
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from known_gaps import known_gap  # noqa: E402
from numba_internals import internals_reason  # noqa: E402

TIMEOUT_S = 600


def suite_folder():
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    spec = importlib.util.find_spec("numba.cuda.tests.cudapy")
    return pathlib.Path(spec.origin).parent


def run_file(name, kiln, scratch):
    """{test id: record} of one file's tests; a process that dies or hangs
    leaves the tests it did not report to `crash_of`."""
    out = pathlib.Path(scratch) / f"{name}.{'kiln' if kiln else 'simulator'}.jsonl"
    command = [sys.executable, str(HERE / "run_module.py"), name, str(out)] + (["--kiln"] if kiln else [])
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", KILN_TARGET="cpu",
               KILN_CACHE_DIR=str(pathlib.Path(scratch) / "cache"))
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
        ended = None if done.returncode == 0 else f"the test process ended with status {done.returncode}: " + (
            done.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        ended = f"the test process did not finish in {TIMEOUT_S} s"
    records = {}
    if out.exists():
        for line in out.read_text().splitlines():
            record = json.loads(line)
            records[record["id"]] = record
    return records, ended


def reason_of(record, folder):
    """One line: why a test failed on Kiln (paths of the suite's `folder`
    shortened to file names)."""
    detail = record.get("detail", "")
    errors = re.findall(r"error: (.+)", detail)
    if errors:
        text = errors[0]
    else:
        lines = [line.strip() for line in detail.strip().splitlines() if line.strip()]
        text = lines[-1] if lines else record["outcome"]
    text = text.replace(f"{folder}/", "")
    return text[:160]


def is_internal_error(record):
    detail = record.get("detail", "")
    return "internal error" in detail or "kiln: internal" in detail


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", help="comma-separated test files (test_array,...)")
    parser.add_argument("--report", type=pathlib.Path, help="write the Markdown report here")
    parser.add_argument("--json", type=pathlib.Path, help="write every test's outcomes here")
    options = parser.parse_args()

    folder = suite_folder()
    names = sorted(path.stem for path in folder.glob("test_*.py"))
    if options.only:
        names = [name for name in names if name in options.only.split(",")]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kiln-conformance-") as scratch:
        with concurrent.futures.ThreadPoolExecutor(max(1, options.jobs)) as pool:
            futures = {(name, kiln): pool.submit(run_file, name, kiln, scratch)
                       for name in names for kiln in (False, True)}
            results = {key: future.result() for key, future in futures.items()}
    seconds = time.perf_counter() - started

    files = []
    for name in names:
        simulated, simulator_ended = results[(name, False)]
        kiln, kiln_ended = results[(name, True)]
        row = collections.Counter()
        failures = []
        crashes = []
        internals = []
        for test, record in sorted(simulated.items()):
            row["tests"] += 1
            if record["outcome"] == "skipped":
                row["simulator skips"] += 1
            if record["outcome"] != "passed":
                continue
            reason = internals_reason(test)
            if reason:
                row["numba internals"] += 1
                internals.append((test, reason))
                continue
            row["simulator passes"] += 1
            mine = kiln.get(test)
            if mine is None:
                crashes.append((test, kiln_ended or "the test never reported"))
            elif mine["outcome"] == "passed":
                row["kiln passes"] += 1
            elif is_internal_error(mine):
                crashes.append((test, "internal error: " + reason_of(mine, folder)))
            else:
                failures.append((test, reason_of(mine, folder)))
        row["crashes"] = len(crashes)
        files.append({"file": name, "counts": dict(row), "failures": failures, "crashes": crashes,
                      "internals": internals, "simulator_ended": simulator_ended})

    total = collections.Counter()
    for entry in files:
        total.update(entry["counts"])
    summary = {"simulator_passes": total["simulator passes"], "kiln_passes": total["kiln passes"],
               "numba_internals": total["numba internals"], "crashes": total["crashes"],
               "files": len(files), "seconds": round(seconds, 1)}
    if options.json:
        options.json.parent.mkdir(parents=True, exist_ok=True)
        options.json.write_text(json.dumps({"summary": summary, "files": files}, indent=1))
    if options.report:
        options.report.parent.mkdir(parents=True, exist_ok=True)
        options.report.write_text(render(summary, files))
    rate = 100.0 * summary["kiln_passes"] / max(1, summary["simulator_passes"])
    print(f"Kiln passes {summary['kiln_passes']} of the {summary['simulator_passes']} tests Numba's "
          f"simulator passes ({rate:.1f}%); {summary['numba_internals']} tests of Numba's internals left "
          f"out; {summary['crashes']} crashes or internal errors; {seconds:.0f} s")


def render(summary, files):
    rate = 100.0 * summary["kiln_passes"] / max(1, summary["simulator_passes"])
    lines = [
        "# Conformance: numba-cuda's own tests on Kiln",
        "",
        "Generated by the README's test command (`tests/conformance/run_suite.py`); do not edit by hand.",
        "",
        "numba-cuda's kernel tests (`numba/cuda/tests/cudapy/` of the numba-cuda wheel in `.venv`), "
        "written by Numba's maintainers, run twice: on Numba's CUDA simulator, then with Kiln standing "
        "in for the simulator's compiler: every kernel and device function the tests make with "
        "`numba.cuda.jit` is compiled by Kiln (its lazy dispatcher, in process) and runs on Kiln's CPU "
        "engine; the simulator still provides the host side (device arrays, streams, the device "
        "list), whose arrays reach Kiln's kernels as the NumPy arrays inside them.",
        "",
        f"**Kiln passes {summary['kiln_passes']} of the {summary['simulator_passes']} tests the simulator "
        f"passes ({rate:.1f}%)**; {summary['numba_internals']} tests of Numba's internals are left out "
        f"(listed below, each with its reason); {summary['crashes']} tests crashed or ended in an internal "
        f"error; {summary['files']} files.",
        "",
        "| file | tests | skipped by the simulator's markers | Numba internals | simulator passes | Kiln passes | Kiln fails | crashes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for entry in files:
        c = entry["counts"]
        lines.append(f"| {entry['file']} | {c.get('tests', 0)} | {c.get('simulator skips', 0)} | "
                     f"{c.get('numba internals', 0)} | {c.get('simulator passes', 0)} | {c.get('kiln passes', 0)} | "
                     f"{len(entry['failures'])} | {c.get('crashes', 0)} |")
    crashes = [(entry["file"], test, why) for entry in files for test, why in entry["crashes"]]
    lines += ["", "## Crashes and internal errors", ""]
    lines += [f"- `{test.split('.', 4)[-1]}`: {why}" for _, test, why in crashes] or ["None."]
    failures = [(entry["file"], test, why) for entry in files for test, why in entry["failures"]]
    unexplained = [test for _, test, _ in failures if known_gap(test) is None]
    lines += ["", "## Why Kiln fails the others", "",
              "Each test the simulator passes and Kiln does not: what stands in the way, then the "
              f"first error Kiln reported. {len(failures) - len(unexplained)} of the {len(failures)} "
              "failures are known gaps.", ""]
    for entry in files:
        if not entry["failures"]:
            continue
        lines += [f"### {entry['file']}", ""]
        for test, why in entry["failures"]:
            reason = known_gap(test) or "**not explained yet**: a new failure"
            lines.append(f"- `{test.split('.', 4)[-1]}`: {reason}. Kiln: {why}")
        lines.append("")
    lines += ["## Tests of Numba's internals", "",
              "Left out of the count: they test what only Numba's own compiler has.", ""]
    for entry in files:
        for test, why in entry["internals"]:
            lines.append(f"- `{test.split('.', 4)[-1]}`: {why}")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    main()
