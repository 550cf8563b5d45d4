"""numba-cuda's own kernel tests, run on Numba's CUDA simulator and with
Kiln standing in for its compiler (run_suite.py), which writes
docs/conformance.md. One run serves every test here; each fails, naming
what broke, on one kind of outcome that must not happen: a test that
crashed or ended in an internal error, a test whose own assertion failed
(a wrong result), a specialization whose values differ from the
simulator's where no known divergence of the simulator explains it (a
wrong value), a build that crashed Kiln, a sweep that could not finish;
and when Kiln passes a smaller share of what the simulator passes than it
already does."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD = pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO / "build"))

# Kiln's share of the tests the simulator passes, in percent, as measured
# when it was last raised: a change that loses tests fails here.
FLOOR_PERCENT = 99.3
# How many of numba-cuda's documentation examples Kiln passed when it was
# last raised.
DOC_EXAMPLES_FLOOR = 16
# How many of the tests the simulator skips for itself Kiln passed when it
# was last raised.
SIMULATOR_SKIPS_FLOOR = 150

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report():
    """What run_suite.py found (its JSON), after writing the report."""
    results = BUILD / "conformance" / "results.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "run_suite.py"), "--jobs", str(os.cpu_count() or 1),
         "--report", str(REPO / "docs" / "conformance.md"), "--json", str(results)],
        capture_output=True, text=True, timeout=2400, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(results.read_text())


def _listed(lines):
    return "\n".join(f"  {line}" for line in lines) + "\nsee docs/conformance.md"


def test_no_test_crashes(report):
    crashed = [f"{entry['file']}: {test} ({why})" for entry in report["files"] for test, why in entry["crashes"]]
    assert not crashed, "tests crashed or ended in an internal error on Kiln:\n" + _listed(crashed)


def test_no_wrong_results(report):
    wrong = [f"{test}: {why}" for entry in report["files"] for test, why in entry["wrong_results"]]
    assert not wrong, "tests whose own assertions fail on Kiln (the simulator passes them):\n" + _listed(wrong)


def test_no_wrong_values(report):
    wrong = [f"{spec['kernel']} {spec['types']}: {spec['difference']}" for spec in report["specializations"]
             if spec["verdict"] == "wrong"]
    assert not wrong, ("specializations whose values differ from the simulator's, which no divergence of "
                       "simulator_divergences.py explains:\n" + _listed(wrong))


def test_no_build_crashes(report):
    crashed = [f"{item['name']} {item['signature']} (from {item['origin']}): {item['detail']}"
               for item in report["sweep"] if item["outcome"] == "crashed"]
    assert not crashed, "builds of the sweep that crashed Kiln:\n" + _listed(crashed)


def test_the_sweep_finishes(report):
    stopped = [f"{item['name']}: {item['detail']}" for item in report["sweep"] if item["outcome"] == "stopped"]
    assert not stopped, "sweeps that did not finish, so kernels may not have been built:\n" + _listed(stopped)


def test_pass_rate_holds(report):
    summary = report["summary"]
    share = 100.0 * summary["kiln_passes"] / summary["simulator_passes"]
    assert share >= FLOOR_PERCENT, (
        f"Kiln passes {summary['kiln_passes']} of the {summary['simulator_passes']} tests the simulator "
        f"passes ({share:.1f}%), below the {FLOOR_PERCENT}% it passed before; see docs/conformance.md")


def test_documentation_examples_give_no_wrong_results(report):
    wrong = [f"{entry['test']}: {entry['reason']}" for entry in report["doc_examples"]
             if entry["outcome"] in ("wrong result", "crash")]
    assert not wrong, "documentation examples whose own assertions fail, or that crash, on Kiln:\n" + _listed(wrong)


def test_every_documentation_example_kiln_refuses_is_explained(report):
    unexplained = [f"{entry['test']}: {entry['reason']}" for entry in report["doc_examples"]
                   if entry["outcome"] == "refusal" and not entry["explained"]]
    assert not unexplained, ("documentation examples Kiln refuses that doc_examples.GAPS does not explain:\n"
                             + _listed(unexplained))


def test_documentation_examples_pass_as_often_as_before(report):
    passed = report["summary"]["doc_examples_passed"]
    assert passed >= DOC_EXAMPLES_FLOOR, (
        f"{passed} of numba-cuda's documentation examples pass on Kiln, fewer than the {DOC_EXAMPLES_FLOOR} "
        "that passed before; see docs/conformance.md")


def test_no_test_the_simulator_skips_crashes(report):
    crashed = [f"{entry['file']}: {test} ({why})" for entry in report["simulator_skips"]
               for test, why in entry["failures"] if why.startswith("crash")]
    assert not crashed, ("tests the simulator skips crashed or ended in an internal error on Kiln:\n"
                         + _listed(crashed))


def test_tests_the_simulator_skips_pass_as_often_as_before(report):
    passed = report["summary"]["simulator_skips_passed"]
    assert passed >= SIMULATOR_SKIPS_FLOOR, (
        f"{passed} of the tests Numba's simulator skips pass on Kiln, fewer than the {SIMULATOR_SKIPS_FLOOR} "
        "that passed before; see docs/conformance.md")
