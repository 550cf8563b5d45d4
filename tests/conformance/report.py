"""The Markdown report of the conformance tier (docs/conformance.md), made
from what run_suite.py gathered: the summary, the table of files, then a
section per kind of outcome, those that must be empty first (wrong
results, crashes, wrong values, build crashes), the refusals and what was
left out last."""

import collections
import json
import pathlib
import re

from known_gaps import known_gap
from shadow_check import MATH_FUNCTIONS, MATH_ULPS, SIMULATED_THREADS


def short(test_id):
    """A test's id without the package's prefix."""
    return (test_id or "").removeprefix("numba.cuda.tests.cudapy.")


def file_names_only(text):
    """`text` with the folders of every path to a Python file left out."""
    return re.sub(r"(?:/[^\s:'\"]+)*/([^/\s:'\"]+\.py)", r"\1", text)


def render(summary, files, specs, items, missed, docs=(), unskipped=()):
    lines = (_introduction(summary) + _file_table(files) + _wrong_results(files) + _crashes(files)
             + _shadow_check(summary, specs) + _build_sweep(summary, items, missed) + _doc_examples(summary, docs)
             + _simulator_skips(summary, unskipped) + _packages() + _refusals(files) + _internals(files))
    return "\n".join(lines).rstrip() + "\n"


def _doc_examples(summary, docs):
    if not docs:
        return []
    lines = [
        "## The documentation's examples",
        "",
        "numba-cuda's documentation examples (`numba/cuda/tests/doc_examples/`: the programs its user guide "
        "shows, which import `numba.cuda` inside the test and define their kernels, device functions, ufuncs "
        "and reductions there) run with Kiln standing in, judged by their own assertions: Numba's simulator "
        "skips every one of them (`doc_examples.py` says how they run). "
        f"**{summary['doc_examples_passed']} of {summary['doc_examples']} pass on Kiln's CPU engine, "
        f"{summary['doc_examples_skipped']} are skipped for a package this machine lacks, "
        f"{summary['doc_examples_wrong']} give wrong results or crash.**",
        "",
        "| example | on Kiln | why |",
        "| --- | --- | --- |",
    ]
    for entry in docs:
        reason = entry["reason"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{entry['test']}` | {entry['outcome']} | {reason} |")
    return lines + [""]


# The last campaign over packages from PyPI (bench/packages/run_packages.py).
PACKAGES_RESULTS = pathlib.Path(__file__).resolve().parents[2] / "bench" / "packages" / "results.json"


def _packages():
    if not PACKAGES_RESULTS.exists():
        return []
    campaign = json.loads(PACKAGES_RESULTS.read_text())
    lines = [
        "## Packages from PyPI",
        "",
        "Open-source packages that keep `@cuda.jit` kernels in ordinary modules beside their host code, "
        "migrated with the one import line (`from numba import cuda` becomes `from kiln import cuda` in "
        "their modules and tests), and their own GPU tests run as published on Numba's simulator and "
        "migrated on Kiln's CPU engine (cold: Kiln's and Numba's caches empty). Recorded by "
        f"`{campaign['command']}`; bench/packages/README.md says how the tests are chosen.",
        "",
        "| package | version | GPU tests | pass on the simulator | pass on Kiln | fail on Kiln | simulator s | "
        "Kiln s (cold) | recorded with |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for package in campaign["packages"]:
        lines.append(f"| {package['package']} | {package['version']} | {package['tests']} | "
                     f"{package['passed_sim']} | {package['passed_kiln']} | {package['failed_kiln']} | "
                     f"{package['sim_s']:.0f} | {package['kiln_s']:.0f} | {package['when']} |")
    causes = [(package["package"], cause) for package in campaign["packages"] for cause in package["root_causes"]]
    if causes:
        lines += ["", "Why tests fail on Kiln, by first error:", ""]
        for name, cause in causes:
            lines.append(f"- {name}, {cause['count']} × {cause['cause']}: e.g. `{cause['example'][:200]}`"
                         .replace("\n", " "))
    return lines + [""]


def _simulator_skips(summary, entries):
    if not entries:
        return []
    ran = summary["simulator_skips"] - summary["simulator_skips_skipped"]
    lines = [
        "## Tests the simulator skips",
        "",
        "The tests Numba's simulator skips for itself (`skip_on_cudasim`: grid barriers and cooperative "
        "launches, libdevice, float16 and bfloat16 bindings, linking, PTX inspection, ...) run on Kiln "
        "with that skip lifted, judged by their own assertions; tests skipped for another reason (a "
        "package or a GPU this machine lacks) stay skipped. They are counted apart from the tests above. "
        f"**{summary['simulator_skips_passed']} of the {ran} that run pass on Kiln's CPU engine** "
        f"({summary['simulator_skips_wrong_result']} fail their assertions, {summary['simulator_skips_refusal']} "
        f"end in another error, {summary['simulator_skips_crash']} crash; "
        f"{summary['simulator_skips_skipped']} of the {summary['simulator_skips']} stay skipped).",
        "",
        "| file | simulator skips | pass on Kiln | fail their assertions | other errors | crashes | still skipped |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for entry in entries:
        counts = entry["counts"]
        lines.append(f"| {entry['file']} | {entry['tests']} | {counts.get('passed', 0)} | "
                     f"{counts.get('wrong result', 0)} | {counts.get('refusal', 0)} | {counts.get('crash', 0)} | "
                     f"{counts.get('skipped', 0)} |")
    lines += ["", "Why the others fail, first error each:", ""]
    for entry in entries:
        for test, reason in entry["failures"]:
            lines.append(f"- `{short(test)}`: {reason.replace(chr(10), ' ')}")
    return lines + [""]


def _introduction(summary):
    rate = 100.0 * summary["kiln_passes"] / max(1, summary["simulator_passes"])
    return [
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
        "A test Kiln fails is a *refusal* when it ends in an exception other than the test's own "
        "assertion (Kiln refused the kernel with a compile error, a TypeError ...), and a *wrong "
        "result* when the test's assertion failed. Two checks look past the tests' assertions: the "
        "*shadow check* runs every launch of the Kiln run on the simulator too and compares the "
        "arrays, and the *build sweep* builds every kernel the folder makes with a signature and "
        "every specialization its tests launch, including those of the tests and modules the "
        "simulator never runs. Wrong results, crashes, wrong values and build crashes must all be "
        "none.",
        "",
        f"**Kiln passes {summary['kiln_passes']} of the {summary['simulator_passes']} tests the simulator "
        f"passes ({rate:.1f}%); {summary['refusals']} refusals, {summary['wrong_results']} wrong results, "
        f"{summary['crashes']} crashes. Shadow check: {summary['compared']} of the "
        f"{summary['specializations']} specializations launched compared with the simulator, "
        f"{summary['agreed']} agreed, {summary['explained']} explained, {summary['wrong_values']} wrong "
        f"values. Build sweep: {summary['swept']} kernels and specializations, {summary['built']} "
        f"built, {summary['build_refusals']} refused, {summary['build_crashes']} crashed.** "
        f"{summary['numba_internals']} tests of Numba's internals are left out (listed below, each "
        f"with its reason); {summary['files']} files; {summary['seconds']:.0f} s.",
        "",
    ]


def _file_table(files):
    lines = [
        "| file | tests | skipped by the simulator's markers | Numba internals | simulator passes | Kiln passes "
        "| refusals | wrong results | crashes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for entry in files:
        c = entry["counts"]
        lines.append(f"| {entry['file']} | {c.get('tests', 0)} | {c.get('simulator skips', 0)} | "
                     f"{c.get('numba internals', 0)} | {c.get('simulator passes', 0)} | {c.get('kiln passes', 0)} | "
                     f"{c.get('refusals', 0)} | {c.get('wrong results', 0)} | {c.get('crashes', 0)} |")
    return lines + [""]


def _listed(pairs, empty="None."):
    return [f"- `{short(test)}`: {why}" for test, why in pairs] or [empty]


def _wrong_results(files):
    wrong = [pair for entry in files for pair in entry["wrong_results"]]
    return (["## Wrong results", "",
             "Tests whose own assertion failed on Kiln (the simulator passes them), with the number of "
             "launches Kiln had finished in the test and the assertion's message.", ""]
            + _listed(wrong) + [""])


def _crashes(files):
    crashes = [pair for entry in files for pair in entry["crashes"]]
    return ["## Crashes and internal errors", ""] + _listed(crashes) + [""]


def _shadow_check(summary, specs):
    lines = [
        "## Shadow check: every launch on the simulator too",
        "",
        "Every launch of the Kiln run also ran on the simulator, the same Python function with the "
        "same launch configuration over copies of the arguments taken before Kiln's launch, and every "
        "array argument was compared afterwards (`shadow_check.py`): bit for bit, every NaN one NaN, "
        "every complex number with a NaN part one complex NaN (as numba's own tests compare them). "
        f"Only where a kernel calls a transcendental function ({', '.join(sorted(MATH_FUNCTIONS)[:8])} "
        f"...), raises to a power or uses fastmath may floats differ, by {MATH_ULPS} units in the last "
        f"place. Launches of more than {SIMULATED_THREADS} threads were not run again (the simulator "
        f"runs a Python thread per CUDA thread): {summary['launches_not_run_again']} of "
        f"{summary['launches']} launches.",
        "",
        f"{summary['specializations']} specializations (kernel and argument types) were launched: "
        f"{summary['compared']} compared, {summary['agreed']} agreed, {summary['explained']} differed "
        f"where the simulator is not Numba's semantics (explained below, `simulator_divergences.py`), "
        f"{summary['wrong_values']} wrong values; {summary['not_compared']} not compared.",
        "",
        "### Wrong values",
        "",
    ]
    wrong = [spec for spec in specs if spec["verdict"] == "wrong"]
    lines += [f"- `{spec['kernel']} {spec['types']}`: {file_names_only(spec['difference'])}"
              for spec in wrong] or ["None."]
    lines += ["", "### Differences the simulator explains", ""]
    explained = [spec for spec in specs if spec["verdict"] == "explained"]
    lines += [f"- `{spec['kernel']} {spec['types']}`: {spec['reason']}. Kiln and the simulator: "
              f"{spec['difference']}" for spec in explained] or ["None."]
    lines += ["", "### Not compared", "",
              "Specializations no launch of which could be compared: launches too big to run again, "
              "launches the simulator cannot run (it raised), and launches Kiln refused or that raised "
              "(the test sees those).", ""]
    unchecked = [spec for spec in specs if spec["verdict"] == "not compared"]
    lines += [f"- `{spec['kernel']} {spec['types']}`: {file_names_only(spec['not_compared'])}"
              for spec in unchecked] or ["None."]
    return lines + [""]


def _build_sweep(summary, items, missed):
    lines = [
        "## Build sweep: every kernel built",
        "",
        "Every kernel and device function numba-cuda's cudapy folder makes with a signature, and every "
        "specialization its tests launch, found as the code makes them: the Kiln run of each test file, "
        "then the tests the simulator skips, run with their skip markers lifted and their launches on "
        "the simulator, and the usecase modules imported on their own (`kernel_sweep.py`). Each was "
        "built compile-only in a child process; a build that ends the process, ends in an internal "
        "error or hangs is a crash, and the sweep goes on in a fresh process.",
        "",
        f"{summary['swept']} kernels and specializations: {summary['built']} built, "
        f"{summary['build_refusals']} refused, {summary['build_crashes']} crashed.",
        "",
        "### Build crashes",
        "",
    ]
    crashed = [item for item in items if item["outcome"] == "crashed"]
    lines += [f"- `{item['name']}` {item['signature']} ({item['kind']} of {pathlib.Path(item['file']).name}:"
              f"{item['line']}, from `{short(item['origin'])}`): {file_names_only(item['detail'])}"
              for item in crashed] or ["None."]
    stopped = [item for item in items if item["outcome"] == "stopped"]
    if stopped:
        lines += ["", "Sweeps that did not finish (kernels after where they stopped were not built):", ""]
        lines += [f"- {item['name']}: {item['detail']}" for item in stopped]
    lines += ["", "### Refused builds", "",
              "Kiln's first error for each, grouped by the error (where it points left out), with the "
              "number of builds and the kernels.", ""]
    refused = collections.defaultdict(list)
    for item in items:
        if item["outcome"] == "refused":
            refused[re.sub(r"^\S+:\d+:\d+: ", "", file_names_only(item["detail"]))].append(item)
    for detail, group in sorted(refused.items(), key=lambda pair: (-len(pair[1]), pair[0])):
        names = sorted({f"`{item['name']}`" for item in group})
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lines.append(f"- {detail} ({len(group)}: {shown})")
    lines += ["", "### Signatures in the source no build reached", "",
              "Functions the source decorates, or passes to a jit call, with a signature, that no build "
              "of the sweep was of: their file cannot be imported here, or the code that makes them does "
              "not run (a test stops before, or expects the jit call to raise; a function no test "
              "calls).", ""]
    lines += [f"- `{file}:{line}` {name}" + (f": the file cannot be imported here ({why})" if why else "")
              for file, line, name, why in missed] or ["None."]
    return lines + [""]


def _refusals(files):
    refusals = [(entry["file"], test, why) for entry in files for test, why in entry["refusals"]]
    unexplained = [test for _, test, _ in refusals if known_gap(test) is None]
    lines = ["## Why Kiln refuses the others", "",
             "Each test the simulator passes that Kiln refuses: what stands in the way, then the first "
             f"error Kiln reported. {len(refusals) - len(unexplained)} of the {len(refusals)} refusals are "
             "known gaps.", ""]
    for entry in files:
        if entry["refusals"]:
            lines += [f"### {entry['file']}", ""]
            for test, why in entry["refusals"]:
                reason = known_gap(test) or "**not explained yet**: a new refusal"
                lines.append(f"- `{short(test)}`: {reason}. Kiln: {why}")
            lines.append("")
    return lines


def _internals(files):
    lines = ["## Tests of Numba's internals", "",
             "Left out of the count: they test what only Numba's own compiler has.", ""]
    return lines + [f"- `{short(test)}`: {why}" for entry in files for test, why in entry["internals"]]
