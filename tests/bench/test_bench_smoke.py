"""The benchmark harness in its smoke mode, so that it cannot rot.

Runs `bench/run.py --smoke` (one repeat, the smallest sizes, no warm-up) into
a temporary file and checks that every figure of docs/benchmarks.md came out
with numbers. Nothing is timed against a goal here: the smoke run's numbers
mean nothing. The Numba side runs in bench/.venv when it exists, else in the
test environment's own Python, which has numba and numba-cuda too; no
network is used (--bench-python skips bench/setup.sh).
"""

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
