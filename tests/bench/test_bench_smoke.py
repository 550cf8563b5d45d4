"""The benchmark harness in its smoke mode, so that it cannot rot.

Runs `bench/run.py --smoke` (one repeat, the smallest sizes, no warm-up) into
a temporary file and checks that every figure of docs/benchmarks.md came out
with numbers. Nothing is timed against a goal here: the smoke run's numbers
mean nothing. The Numba side runs in bench/.venv when it exists, else in the
test environment's own Python, which has numba and numba-cuda too; no
network is used (--bench-python skips bench/setup.sh).
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

# Builds whole projects or runs benchmarks: `scripts/test.sh --quick` skips it.
pytestmark = pytest.mark.slow

REPO = pathlib.Path(__file__).resolve().parents[2]
FIGURES = {
    "1": "Cold compile",
    "2": "Whole-module build",
    "2b": "A module of 100 and 500 kernels",
    "3": "first finished launch",
    "3b": "First call of a kernel specialized on demand",
    "3c": "Import of a built module",
    "4": "Dispatch overhead",
    "5": "registers, spills, shared and constant memory",
    "6": "CPU engine throughput",
    "6c": "CPU engine launch cost",
    "6d": "CPU engine throughput against NumPy",
    "6e": "Interrupt polls on the CPU engine",
    "7": "`kiln check`",
    "8": "Remote cache tier",
    "9": "Cache storage",
}
NUMBER = re.compile(r"\d[\d,.]*\s*(?:ms|µs|ns|MiB|x|%)|\d+ / \d+")  # times, ratios; Kiln / Numba counts


def bench_python():
    for candidate in (REPO / "bench" / ".venv" / "bin" / "python", REPO / ".venv" / "bin" / "python",
                      pathlib.Path(sys.executable)):
        if candidate.exists():
            return str(candidate)
    pytest.skip("no Python with numba for the benchmark's yardstick")


def sections(text):
    """{figure number: its text} from the generated Markdown."""
    found = {}
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        head = re.match(r"(\d+[a-z]?)\. ", part)
        if head:
            found[head.group(1)] = part
    return found


def test_smoke_run_writes_every_figure(tmp_path, build_dir):
    stand_in = list((build_dir / "tests" / "runtime" / "stand_in_driver").glob("*.so*"))
    if not stand_in:
        pytest.skip("the stand-in CUDA driver is not built")
    output = tmp_path / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--smoke", "--bench-python", bench_python(),
         "--build-dir", str(build_dir), "--output", str(output)],
        capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    text = output.read_text()
    assert "Smoke run" in text
    assert "Not measured" not in text, text
    assert re.search(r"\d+ cores \(`nproc`\)", text)
    assert "load average" in text.lower()
    assert "python3 bench/run.py --smoke" in text
    found = sections(text)
    for number, title in FIGURES.items():
        assert number in found, f"figure {number} is missing"
        body = found[number]
        assert title in body.splitlines()[0], body.splitlines()[0]
        rows = [line for line in body.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
        assert any(NUMBER.search(line) for line in rows[1:]) or NUMBER.search(body), \
            f"figure {number} has no numbers:\n{body}"
    summary = text.split("## Summary", 1)[1].split("## 1.", 1)[0]
    for number in FIGURES:
        assert re.search(rf"^\| {number}\. .*\d", summary, flags=re.M), f"no headline for figure {number}"
    assert "Where Kiln is behind" in summary


def test_register_pairs_pairs_the_kernels_of_a_test_file(tmp_path, build_dir):
    """bench/register_pairs.py on one small test file of numba-cuda's folder
    (test_laplace: a kernel closing over a device function with a
    signature): Kiln's and Numba's PTX of its kernel pair up on both
    architectures, and the JSON holds each pair's registers."""
    results = tmp_path / "pairs.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "register_pairs.py"), "--files", "test_laplace", "--jobs", "1",
         "--json", str(results), "--out", str(tmp_path / "ptx")],
        capture_output=True, text=True, cwd=REPO, timeout=600,
        env={**os.environ, "KILN_BUILD_DIR": str(build_dir)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert "| sm_80 |" in done.stdout and "| sm_90 |" in done.stdout, done.stdout
    report = json.loads(results.read_text())
    assert {"archs", "summary", "loss_reasons", "kiln_refused", "pairs", "losses"} <= set(report)
    assert report["archs"] == [80, 90]
    for arch in ("80", "90"):
        summary = report["summary"][arch]
        assert summary["pairs"] >= 1, report
        assert {"kiln_at_most_numba", "kiln_at_most_numba_percent", "max_excess", "kiln_spills_more"} <= set(summary)
    for pair in report["pairs"]:
        assert {"kernel", "file", "signature", "arch"} <= set(pair)
        assert pair["file"] == "test_laplace" and "jocabi_relax_core" in pair["kernel"]
        for side in ("kiln", "numba"):
            assert pair[side]["registers"] > 0
            assert pathlib.Path(pair[f"{side}_ptx"]).read_text().count(".entry") == 1
