"""What the benchmark scripts in bench/ share: finding kiln and the
benchmark environment, timing processes, describing the machine, tables.

Standard library only, so that any Python 3 can run the scripts that drive
the benchmarks; Numba runs in bench/.venv (bench/setup.sh).
"""

import json
import os
import pathlib
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
CUDA_HOME = pathlib.Path(os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda")
BENCH_PYTHON = BENCH / ".venv" / "bin" / "python"


def default_build_dir():
    return pathlib.Path(os.environ.get("KILN_BUILD_DIR") or ROOT / "build")


def default_kiln():
    return str(default_build_dir() / "driver" / "kiln")


def wait_for_kiln(kiln, timeout=900):
    """`kiln --version`, retried while the binary is missing or being rebuilt."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done = subprocess.run([kiln, "--version"], capture_output=True, text=True)
            if done.returncode == 0:
                return done.stdout.strip()
            problem = done.stderr.strip()
        except OSError as error:  # missing, or "text file busy" while ninja writes it
            problem = str(error)
        if time.monotonic() > deadline:
            raise SystemExit(f"{kiln} does not run: {problem}")
        print(f"waiting for {kiln} ({problem}); retrying in 10 s", file=sys.stderr)
        time.sleep(10)


def snapshot(path, folder):
    """A private copy of a build product (kiln, the CPU runner library), so
    that a rebuild of the build folder during a run cannot mix two builds or
    catch a half-written file. Waits while the file is missing."""
    source = pathlib.Path(path)
    for _ in range(90):
        if source.exists():
            break
        print(f"waiting for {source}; retrying in 10 s", file=sys.stderr)
        time.sleep(10)
    target = pathlib.Path(folder) / source.name
    shutil.copy2(source, target)
    return str(target)


def require_bench_python():
    """The Python of the benchmark environment (numba, numba-cuda, NumPy):
    $KILN_BENCH_PYTHON if set (bench/run.py --bench-python, the smoke test's
    .venv), else bench/.venv's."""
    chosen = os.environ.get("KILN_BENCH_PYTHON")
    if chosen:
        return chosen
    if not BENCH_PYTHON.exists():
        raise SystemExit(f"{BENCH_PYTHON} is missing: run `bash bench/setup.sh` first")
    return str(BENCH_PYTHON)


def bench_env(**extra):
    """The environment benchmark subprocesses run in (no CUDAARCHS: Kiln's default list)."""
    env = dict(os.environ)
    env.pop("CUDAARCHS", None)
    env["CUDA_HOME"] = str(CUDA_HOME)
    env.update(extra)
    return env


def timed_run(command, env=None, cwd=None):
    """Wall time of a fresh process, in seconds; raises with its output if it fails."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env or bench_env(), cwd=cwd)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(map(str, command))} failed ({done.returncode}):\n"
                           f"{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return elapsed, done.stdout


def spread(values):
    """min, median and max of a list of repeats, for the JSON results."""
    values = list(values)
    if not values:
        return {"min": float("nan"), "median": float("nan"), "max": float("nan"), "n": 0}
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def write_json(path, data):
    """Writes a benchmark's structured results (--json), for bench/run.py."""
    if path:
        pathlib.Path(path).write_text(json.dumps(data, indent=1))


def median(values):
    return statistics.median(values) if values else float("nan")


def cpu_model():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def ptxas_version():
    try:
        text = subprocess.run([str(CUDA_HOME / "bin" / "ptxas"), "--version"],
                              capture_output=True, text=True).stdout
        found = re.search(r"release ([\d.]+), V([\d.]+)", text)
        return f"ptxas {found.group(2)}" if found else "ptxas ?"
    except OSError:
        return "no ptxas"


def machine_line(kiln_version=None):
    parts = [f"{cpu_model()}, {os.cpu_count()} cores", platform.platform(terse=True)]
    if kiln_version:
        parts.append(kiln_version)
    parts.append(ptxas_version())
    return "; ".join(parts)


def load_average():
    """The 1-minute load average: other work on the machine skews timings."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def command_line():
    """The command that is running, for the header of a benchmark's output."""
    script = pathlib.Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(ROOT)
    except ValueError:
        pass
    python = pathlib.Path(sys.executable)
    try:
        python = python.relative_to(ROOT)
    except ValueError:
        python = pathlib.Path(python.name)
    return shlex.join([str(python), str(script), *sys.argv[1:]])


def table(header, rows, align=None):
    """A Markdown table; `align` is a string of 'l'/'r' per column."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    return "\n".join(lines)


def ms(seconds, digits=0):
    if seconds != seconds:  # nan
        return "-"
    return f"{seconds * 1000:.{digits}f} ms"


def ratio(a, b):
    if not b or a != a or b != b:
        return "-"
    return f"{a / b:.1f}x"


def run_cpu_worker(script, kernels, module, build_dir, arguments):
    """Builds the kernel source `kernels` as the built module `module`, then
    runs `script --worker --module MODULE *arguments` in a fresh process of
    the benchmark environment's Python, with the module importable and
    KILN_TARGET=cpu. Returns the JSON the worker printed last, and the
    version of the Kiln that built it."""
    build_dir = pathlib.Path(build_dir)
    kiln = str(build_dir / "driver" / "kiln")
    version = wait_for_kiln(kiln)
    python = require_bench_python()
    with tempfile.TemporaryDirectory(prefix=f"kiln-bench-{module}-") as folder:
        source = pathlib.Path(folder) / f"{module}.py"
        source.write_text(kernels)
        timed_run([kiln, "build", source, "--module", module, "-o", folder, "--python", python])
        env = bench_env(PYTHONPATH=os.pathsep.join([str(build_dir / "python"), folder]), KILN_TARGET="cpu")
        _, stdout = timed_run([python, str(pathlib.Path(script).resolve()), "--worker", "--module", module,
                               *arguments], env=env)
    return json.loads(stdout.strip().splitlines()[-1]), version
