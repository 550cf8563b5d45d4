"""numba-cuda's own kernel tests, run on Numba's CUDA simulator and with
Kiln standing in for its compiler (run_suite.py). Writes
docs/conformance.md; fails if a test crashes or ends in an internal error,
or if Kiln passes a smaller share of what the simulator passes than it
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
FLOOR_PERCENT = 93.0


@pytest.mark.slow
def test_kiln_passes_numba_cudas_own_tests():
    results = BUILD / "conformance" / "results.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "run_suite.py"), "--jobs", str(os.cpu_count() or 1),
         "--report", str(REPO / "docs" / "conformance.md"), "--json", str(results)],
        capture_output=True, text=True, timeout=2400, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(results.read_text())
    summary = report["summary"]
    crashed = [f"{entry['file']}: {test} ({why})" for entry in report["files"]
               for test, why in entry["crashes"]]
    assert not crashed, "tests crashed or ended in an internal error:\n" + "\n".join(crashed)
    share = 100.0 * summary["kiln_passes"] / summary["simulator_passes"]
    assert share >= FLOOR_PERCENT, (
        f"Kiln passes {summary['kiln_passes']} of the {summary['simulator_passes']} tests the simulator "
        f"passes ({share:.1f}%), below the {FLOOR_PERCENT}% it passed before; see docs/conformance.md")
