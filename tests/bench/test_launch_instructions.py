"""bench/launch_instructions.py, run with fewer calls than its figures take,
so that it cannot rot: it prints an instruction count per call for each
statement. A process's count moves by some 100,000 instructions from run to
run (where objects land in memory, what the collector finds), which 2,000
calls spread thin enough for a count per call to be of the call."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_the_harness_counts_the_instructions_of_each_statement(tmp_path, build_dir):
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is not installed")
    bench_python = REPO / "bench" / ".venv" / "bin" / "python"
    env_python = bench_python if bench_python.exists() else pathlib.Path(sys.executable)

    done = subprocess.run(
        [sys.executable, REPO / "bench" / "launch_instructions.py", "--calls", "2000",
         "--build-dir", build_dir], capture_output=True, text=True, timeout=900,
        env={"PATH": "/usr/bin:/bin", "KILN_BENCH_PYTHON": str(env_python),
             "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    rows = dict(re.findall(r"^\| `(.+?)` \| ([\d,]+) \|$", done.stdout, re.MULTILINE))
    assert set(rows) == {"launch.prepare(out, x, x)", "kernel[4, 256]"}, done.stdout
    # A call runs C code (hundreds of instructions at least); a count in the
    # millions would be the whole process's, not a call's.
    assert all(100 < int(value.replace(",", "")) < 1_000_000 for value in rows.values()), (
        done.stdout)
