"""Runs numba-cuda's own kernel tests (`numba/cuda/tests/cudapy/` of the
installed numba-cuda) twice: on Numba's CUDA simulator, then with Kiln
standing in for the simulator's compiler (kiln_stand_in.py), and writes
what Kiln passes of what the simulator passes, file by file, with three
checks that a pass count alone would hide:

- wrong results apart from refusals: a test Kiln fails because the test's
  own assertion failed (AssertionError: Kiln compiled and ran the kernel,
  and the values are wrong) is a wrong result; one that ends in another
  exception (a compile error, TypeError, NotImplementedError ...) is a
  refusal, explained by known_gaps.py where the gap is known;
- the shadow check (shadow_check.py): every launch of the Kiln run also
  runs on the simulator, over copies of its arguments, and the arrays are
  compared; a specialization (kernel and argument types) where they differ
  is a wrong value unless simulator_divergences.py explains it;
- the build sweep (kernel_sweep.py): every kernel and device function the
  cudapy folder makes with a signature, and every specialization its
  tests launch, including in the tests and usecase modules the simulator
  never runs, built by Kiln; a build that kills the process, ends in an
  internal error or hangs is a crash.

The tests the simulator skips for itself (skip_on_cudasim: grid barriers,
libdevice, float16 bindings, ...) run on Kiln too, with that skip lifted,
and are counted apart: no simulator run judges them, their own assertions
do.

    .venv/bin/python tests/conformance/run_suite.py [--jobs N] [--only test_array,...]
        [--report docs/conformance.md] [--json FILE]

Each test file runs in processes of its own (run_module.py), so that a
crash loses only that file's remaining tests, which are then reported as
crashed; the sweep goes on in fresh processes past a build that crashed.
Tests of Numba's internals, which no other compiler could pass, are left
out of the count, each with its reason (numba_internals.py). The files
run longest first, by the durations the previous run wrote to the JSON
file, when there is one.
"""

import argparse
import collections
import concurrent.futures
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import doc_examples  # noqa: E402
from kernel_sweep import is_internal_failure, static_signature_definitions  # noqa: E402
from numba_internals import internals_reason  # noqa: E402
from report import file_names_only, render, short  # noqa: E402
from simulator_divergences import divergence_reason  # noqa: E402

TIMEOUT_S = 600
# A file whose builds crash the sweep's process this many times is swept no further.
SWEEP_RESTARTS = 5


DOC_EXAMPLES = "numba.cuda.tests.doc_examples"


def suite_folder(package="numba.cuda.tests.cudapy"):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    spec = importlib.util.find_spec(package)
    return pathlib.Path(spec.origin).parent


def read_lines(path):
    """The JSON objects of a JSON-lines file, [] if there is none."""
    path = pathlib.Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- Running the processes ----------------------------------------------------

def run_process(arguments, scratch):
    """Runs run_module.py; None if it ended well, else how it ended."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", KILN_TARGET="cpu",
               KILN_CACHE_DIR=str(pathlib.Path(scratch) / "cache"))
    try:
        done = subprocess.run([sys.executable, str(HERE / "run_module.py"), *arguments], capture_output=True,
                              text=True, env=env, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"the process did not finish in {TIMEOUT_S} s"
    if done.returncode == 0:
        return None
    if "Timeout (0:" in done.stderr:  # faulthandler's, on a build that hung
        return f"the build did not finish in {done.stderr.split('Timeout (', 1)[1].split(')', 1)[0]}"
    how = f"signal {-done.returncode}" if done.returncode < 0 else f"status {done.returncode}"
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return f"the process ended with {how}" + (f": {last}" if last else "")


def sweep_runs(name, builds, first_ended, scratch):
    """Runs the sweep of `name` again in fresh processes while its log
    says a process ended before the sweep finished (a crash), and returns
    [(first line of the run in the log, how the run ended)]."""
    runs = [(0, first_ended)]
    for _ in range(SWEEP_RESTARTS):
        events = read_lines(builds)
        if events and events[-1].get("event") == "finished":
            break
        if len(runs) > 1 and not any(event["event"] in ("started", "ended") for event in events[runs[-1][0]:]):
            break  # the last run tried no build: running again would not either
        runs.append((len(events), run_process([name, "--sweep-only", "--builds", str(builds)], scratch)))
    return runs


def run_simulator_job(name, scratch):
    out = pathlib.Path(scratch) / f"{name}.simulator.jsonl"
    ended = run_process([name, str(out)], scratch)
    return {"tests": {record["id"]: record for record in read_lines(out)}, "ended": ended}


def run_kiln_job(name, scratch):
    base = pathlib.Path(scratch) / name
    tests, launches, builds = (f"{base}.kiln.jsonl", f"{base}.launches.jsonl", f"{base}.builds.jsonl")
    ended = run_process([name, tests, "--kiln", "--launches", launches, "--builds", builds], scratch)
    runs = sweep_runs(name, builds, ended, scratch)
    records = {record["id"]: record for record in read_lines(tests)}
    return {"tests": records, "ended": ended, "launches": read_lines(launches),
            "builds": sweep_outcomes(name, read_lines(builds), runs),
            "unskipped": run_simulator_skips(name, records, base, scratch)}


def run_simulator_skips(name, records, base, scratch):
    """The tests the run skipped, run again without the simulator's skips:
    {"tests": {id: record}, "ended": how the process ended}."""
    skipped = [test for test, record in records.items() if record["outcome"] == "skipped"]
    if not skipped:
        return {"tests": {}, "ended": None}
    ids, out = pathlib.Path(f"{base}.skipped.txt"), f"{base}.unskipped.jsonl"
    ids.write_text("\n".join(skipped) + "\n")
    ended = run_process([name, out, "--kiln", "--simulator-skips", str(ids)], scratch)
    return {"tests": {record["id"]: record for record in read_lines(out)}, "ended": ended}


def run_sweep_job(name, scratch):
    builds = pathlib.Path(scratch) / f"{name}.builds.jsonl"
    ended = run_process([name, "--sweep-only", "--builds", str(builds)], scratch)
    return {"builds": sweep_outcomes(name, read_lines(builds), sweep_runs(name, builds, ended, scratch))}


def run_docs_job(name, scratch):
    """A module of the documentation's examples, with Kiln standing in."""
    out = pathlib.Path(scratch) / f"{name}.docs.jsonl"
    ended = run_process([name, str(out), "--kiln", "--doc-examples"], scratch)
    return {"tests": {record["id"]: record for record in read_lines(out)}, "ended": ended}


JOBS = {"simulator": run_simulator_job, "kiln": run_kiln_job, "sweep": run_sweep_job, "docs": run_docs_job}


def timed(kind, name, scratch):
    started = time.perf_counter()
    result = JOBS[kind](name, scratch)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def longest_first(jobs, durations):
    """The jobs, those that took longest in the previous run first (those
    it did not run first of all, Kiln's before the simulator's)."""
    rank = {"kiln": 0, "simulator": 1, "sweep": 2, "docs": 3}
    return sorted(jobs, key=lambda job: (-durations.get(f"{job[0]} {job[1]}", 1e9), rank[job[0]], job[1]))


# --- What happened ------------------------------------------------------------

def sweep_outcomes(name, events, runs):
    """{key: item}: each item the sweep found, with its outcome ("built",
    "refused", "crashed") and detail; a build started in a run that ended
    before the build did crashed, as that run ended. A sweep whose log
    never says it finished adds an item "stopped", with how it ended."""
    items = {}
    bounds = [start for start, _ in runs[1:]] + [len(events)]
    for (start, ended), stop in zip(runs, bounds):
        for event in events[start:stop]:
            if event["event"] == "started":
                items[event["key"]] = dict(event, outcome="crashed", detail=ended or "the process ended")
            elif event["event"] == "ended":
                outcome = "crashed" if event["outcome"] == "internal error" else event["outcome"]
                items[event["key"]] = dict(event, outcome=outcome)
    if not any(event["event"] == "finished" for event in events):
        items["stopped"] = {"kind": "sweep", "name": name, "signature": "", "origin": "", "outcome": "stopped",
                            "detail": why_the_sweep_stopped(events[runs[-1][0]:], runs)}
    return items


def why_the_sweep_stopped(last_events, runs):
    """How the last process of a sweep that never finished ended, and
    where: in a build (each process did: no more were started), or in a
    test run for discovery."""
    ended = runs[-1][1] or "the sweep did not finish"
    steps = [event for event in last_events if event["event"] in ("discovering", "started", "ended")]
    if steps and steps[-1]["event"] == "started":
        return (f"{ended}; each of its {len(runs)} processes ended in a build that crashed, and the builds "
                "after those were not tried")
    if steps and steps[-1]["event"] == "discovering":
        return f"{ended} (in {short(steps[-1]['test'])}, run for discovery)"
    return ended


def classify(record):
    """A Kiln test record's outcome: "passed", "wrong result" (the test's
    own assertion failed), "crash" (an internal error) or "refusal"."""
    if record["outcome"] == "passed":
        return "passed"
    if is_internal_failure(record.get("detail", "")):
        return "crash"
    return "wrong result" if record["outcome"] == "failed" else "refusal"


def reason_of(record):
    """One line: why a test failed on Kiln (Kiln's first error, else the
    exception's last line), paths shortened to file names."""
    detail = record.get("detail", "")
    lines = [line.strip() for line in detail.strip().splitlines() if line.strip()]
    errors = [line.split("error: ", 1)[1] for line in lines if "error: " in line]
    text = errors[0] if errors else (lines[-1] if lines else record["outcome"])
    return file_names_only(text)[:300]


def file_entry(name, simulated, kiln):
    """The row of one test file: counts, and the tests in each category."""
    row = collections.Counter()
    entry = {"file": name, "refusals": [], "wrong_results": [], "crashes": [], "internals": [],
             "simulator_ended": simulated["ended"]}
    for test, record in sorted(simulated["tests"].items()):
        row["tests"] += 1
        if record["outcome"] == "skipped":
            row["simulator skips"] += 1
        if record["outcome"] != "passed":
            continue
        reason = internals_reason(test)
        if reason:
            row["numba internals"] += 1
            entry["internals"].append((test, reason))
            continue
        row["simulator passes"] += 1
        mine = kiln["tests"].get(test)
        if mine is None:
            entry["crashes"].append((test, kiln["ended"] or "the test never reported"))
            continue
        category = classify(mine)
        if category == "passed":
            row["kiln passes"] += 1
        elif category == "crash":
            entry["crashes"].append((test, "internal error: " + reason_of(mine)))
        elif category == "wrong result":
            launches = mine.get("kiln_launches", 0)
            entry["wrong_results"].append((test, f"after {launches} Kiln launches: {reason_of(mine)}"))
        else:
            entry["refusals"].append((test, reason_of(mine)))
    for key, label in (("refusals", "refusals"), ("wrong_results", "wrong results"), ("crashes", "crashes")):
        row[label] = len(entry[key])
    entry["counts"] = dict(row)
    return entry


def doc_example_entries(names, results):
    """Each documentation example's outcome on Kiln ("passed", "skipped",
    "refusal", "wrong result", "crash") and why, by test."""
    entries = []
    for name in names:
        result = results[("docs", name)]
        if not result["tests"]:
            entries.append({"test": name, "outcome": "crash", "reason": result["ended"] or "no test reported"})
        for test_id, record in sorted(result["tests"].items()):
            test = test_id.removeprefix(f"{DOC_EXAMPLES}.")
            if record["outcome"] == "skipped":
                entries.append({"test": test, "outcome": "skipped", "reason": record.get("detail", "")})
                continue
            outcome = classify(record)
            reason = "" if outcome == "passed" else (doc_examples.gap_reason(test) or reason_of(record))
            entries.append({"test": test, "outcome": outcome, "reason": reason,
                            "explained": outcome == "refusal" and doc_examples.gap_reason(test) is not None})
    return entries


def simulator_skip_entries(names, results):
    """Per test file, what the tests the simulator skips do on Kiln: each
    test "passed", a "wrong result" (its own assertion failed), a
    "refusal", a "crash", or "skipped" still (for another reason: a package
    this machine lacks); a test that never reported is a crash."""
    entries = []
    for name in names:
        result = results[("kiln", name)]
        simulated = results[("simulator", name)]["tests"]
        # What the simulator skipped, Kiln's run may have run (a test that
        # asks the device whether it has bfloat16, which Kiln's CPU engine
        # has): its outcome there counts. What Kiln's run skipped too ran
        # again with the simulator's skips lifted.
        ran_on_kiln = {test for test, record in result["tests"].items()
                       if record["outcome"] != "skipped" and simulated.get(test, {}).get("outcome") == "skipped"}
        skipped = [test for test, record in result["tests"].items() if record["outcome"] == "skipped"]
        skipped = sorted(set(skipped) | ran_on_kiln)
        if not skipped:
            continue
        unskipped = result["unskipped"]
        counts = collections.Counter()
        failures = []
        for test in skipped:
            record = result["tests"][test] if test in ran_on_kiln else unskipped["tests"].get(test)
            if record is None:
                outcome, reason = "crash", unskipped["ended"] or "the test never reported"
            elif record["outcome"] == "skipped":
                outcome, reason = "skipped", ""
            else:
                outcome = classify(record)
                reason = "" if outcome == "passed" else reason_of(record)
            counts[outcome] += 1
            if reason:
                failures.append((test, f"{outcome}: {reason}"))
        entries.append({"file": name, "counts": dict(counts), "tests": len(skipped), "failures": failures})
    return entries


def specializations(launches):
    """The launches grouped by specialization (kernel and the argument types
    Kiln launched it with), each with its verdict: "agreed", "explained",
    "wrong" or "not compared"."""
    found = {}
    for launch in launches:
        key = f"{launch['kernel']} {launch['types']}"
        spec = found.setdefault(key, {"kernel": launch["kernel"], "types": launch["types"], "file": launch["file"],
                                      "line": launch["line"], "launches": collections.Counter(), "tests": []})
        spec["launches"][launch["outcome"]] += 1
        if launch["test"] not in spec["tests"]:
            spec["tests"].append(launch["test"])
        if launch["outcome"] == "differed":
            spec.setdefault("difference", f"{launch['detail']} (in {short(launch['test'])})")
        elif launch["outcome"] != "agreed":
            spec.setdefault("not_compared", f"{launch['outcome']}: {launch['detail']}")
    for spec in found.values():
        spec["verdict"], spec["reason"] = verdict(spec)
        spec["launches"] = dict(spec["launches"])
    return list(found.values())


def verdict(spec):
    launches = spec["launches"]
    if launches["differed"]:
        reason = divergence_reason(spec["kernel"], spec["types"])
        return ("explained", reason) if reason else ("wrong", None)
    if launches["agreed"]:
        return "agreed", None
    return "not compared", None


def unimportable(names, results):
    """{file: why}: the test files the Kiln run could not import."""
    found = {}
    for name in names:
        tests = results[("kiln", name)]["tests"]
        # unittest's loader reports a module it cannot import as a failed test of its own.
        record = tests.get(f"unittest.loader._FailedTest.{name}") or tests.get(f"numba.cuda.tests.cudapy.{name}")
        if record and record["outcome"] == "error":
            found[f"{name}.py"] = record["detail"].strip().splitlines()[-1]
    return found


def not_reached(folder, items, cannot_import):
    """[(file, line, name, why)] of the functions the folder's source gives
    a signature that no build of the sweep was of; why: the file cannot be
    imported here, if so, else "" (the code that makes them did not run)."""
    reached = {(pathlib.Path(item["file"]).name, item["line"]) for item in items
               if item.get("kind") in ("kernel", "device function")}
    return [(path.name, line, name, cannot_import.get(path.name, "")) for path in sorted(folder.glob("*.py"))
            for line, name in static_signature_definitions(path) if (path.name, line) not in reached]


def summarize(files, specs, items, missed, seconds, docs=(), unskipped=()):
    total = collections.Counter()
    for entry in files:
        total.update(entry["counts"])
    verdicts = collections.Counter(spec["verdict"] for spec in specs)
    launches = collections.Counter()
    for spec in specs:
        launches.update(spec["launches"])
    outcomes = collections.Counter(item["outcome"] for item in items)
    return {
        "simulator_passes": total["simulator passes"], "kiln_passes": total["kiln passes"],
        "refusals": total["refusals"], "wrong_results": total["wrong results"], "crashes": total["crashes"],
        "numba_internals": total["numba internals"], "files": len(files),
        "specializations": len(specs), "compared": verdicts["agreed"] + verdicts["explained"] + verdicts["wrong"],
        "agreed": verdicts["agreed"], "explained": verdicts["explained"], "wrong_values": verdicts["wrong"],
        "not_compared": verdicts["not compared"], "launches": sum(launches.values()),
        "launches_not_run_again": launches["not run again"],
        "swept": sum(outcomes[kind] for kind in ("built", "refused", "crashed")), "built": outcomes["built"],
        "build_refusals": outcomes["refused"], "build_crashes": outcomes["crashed"],
        "sweep_stops": outcomes["stopped"], "not_reached": len(missed), "seconds": round(seconds, 1),
        "doc_examples": len(docs), "doc_examples_passed": sum(e["outcome"] == "passed" for e in docs),
        "doc_examples_skipped": sum(e["outcome"] == "skipped" for e in docs),
        "doc_examples_wrong": sum(e["outcome"] in ("wrong result", "crash") for e in docs),
        "simulator_skips": sum(entry["tests"] for entry in unskipped),
        **{f"simulator_skips_{outcome.replace(' ', '_')}": sum(entry["counts"].get(outcome, 0) for entry in unskipped)
           for outcome in ("passed", "wrong result", "refusal", "crash", "skipped")}}


def summary_line(summary):
    rate = 100.0 * summary["kiln_passes"] / max(1, summary["simulator_passes"])
    return (f"Kiln passes {summary['kiln_passes']} of the {summary['simulator_passes']} tests Numba's simulator "
            f"passes ({rate:.1f}%): {summary['refusals']} refusals, {summary['wrong_results']} wrong results, "
            f"{summary['crashes']} crashes; {summary['numba_internals']} tests of Numba's internals left out. "
            f"Shadow check: {summary['compared']} of {summary['specializations']} specializations compared, "
            f"{summary['agreed']} agreed, {summary['explained']} explained, {summary['wrong_values']} wrong "
            f"values. Build sweep: {summary['swept']} kernels and specializations, {summary['built']} built, "
            f"{summary['build_refusals']} refused, {summary['build_crashes']} crashed. Documentation examples: "
            f"{summary['doc_examples_passed']} of {summary['doc_examples']} pass, {summary['doc_examples_skipped']} "
            f"skipped, {summary['doc_examples_wrong']} wrong results or crashes. Tests the simulator skips: "
            f"{summary['simulator_skips_passed']} of {summary['simulator_skips']} pass on Kiln, "
            f"{summary['simulator_skips_skipped']} still skipped. {summary['seconds']:.0f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", help="comma-separated test files (test_array,...); the usecase modules too")
    parser.add_argument("--report", type=pathlib.Path, help="write the Markdown report here")
    parser.add_argument("--json", type=pathlib.Path, help="write every outcome here")
    options = parser.parse_args()

    folder = suite_folder()
    names = sorted(path.stem for path in folder.glob("test_*.py"))
    usecases = sorted(path.stem for path in folder.glob("*.py") if not path.stem.startswith(("test_", "__")))
    if options.only:
        wanted = options.only.split(",")
        names = [name for name in names if name in wanted]
        usecases = [name for name in usecases if name in wanted]
    previous = json.loads(options.json.read_text()) if options.json and options.json.exists() else {}
    docs = sorted(path.stem for path in suite_folder(DOC_EXAMPLES).glob("test_*.py"))
    if options.only:
        docs = [name for name in docs if name in wanted or "doc_examples" in wanted]
    jobs = ([(kind, name) for name in names for kind in ("simulator", "kiln")] + [("sweep", name) for name in usecases]
            + [("docs", name) for name in docs])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kiln-conformance-") as scratch:
        with concurrent.futures.ThreadPoolExecutor(max(1, options.jobs)) as pool:
            futures = {job: pool.submit(timed, *job, scratch)
                       for job in longest_first(jobs, previous.get("durations", {}))}
            results = {job: future.result() for job, future in futures.items()}
    seconds = time.perf_counter() - started

    files = [file_entry(name, results[("simulator", name)], results[("kiln", name)]) for name in names]
    specs = specializations([launch for name in names for launch in results[("kiln", name)]["launches"]])
    items = [item for job, result in sorted(results.items()) for item in result.get("builds", {}).values()]
    missed = not_reached(folder, items, unimportable(names, results)) if not options.only else []
    docs_entries = doc_example_entries(docs, results)
    unskipped = simulator_skip_entries(names, results)
    summary = summarize(files, specs, items, missed, seconds, docs_entries, unskipped)
    durations = {f"{kind} {name}": result["seconds"] for (kind, name), result in results.items()}
    if options.json:
        options.json.parent.mkdir(parents=True, exist_ok=True)
        options.json.write_text(json.dumps({"summary": summary, "files": files, "specializations": specs,
                                            "sweep": items, "not_reached": missed, "doc_examples": docs_entries,
                                            "simulator_skips": unskipped,
                                            "durations": durations},
                                           indent=1))
    if options.report:
        options.report.parent.mkdir(parents=True, exist_ok=True)
        options.report.write_text(render(summary, files, specs, items, missed, docs_entries, unskipped))
    print(summary_line(summary))


if __name__ == "__main__":
    main()
