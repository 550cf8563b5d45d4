"""SIGINT, SIGTERM and SIGHUP stop `kiln build` as they stop any program (it
dies of the signal), and as with gcc nothing is left behind: no file in
$TMPDIR, no ptxas still running, no half-written output."""

import signal
import subprocess
import time

import pytest

from process_census import (default_stop_signals, live_processes, marked_environment, new_marker,
                            surviving_processes)

KERNEL_COUNT = 16


def many_kernels():
    """Enough kernels and architectures that ptxas runs for seconds."""
    parts = ["import math", "from numba import cuda, float32, float64, void", ""]
    for i in range(KERNEL_COUNT):
        parts += ["", "@cuda.jit([void(float32[::1]), void(float64[::1])])",
                  f"def kernel{i}(a):",
                  "    i = cuda.grid(1)",
                  "    if i < a.size:",
                  f"        a[i] = math.sin(a[i]) * {i + 1} + math.exp(a[i]) / (1 + math.cos(a[i]))",
                  ""]
    return "\n".join(parts)


def wait_for_ptxas(marker, process, deadline_seconds=120):
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        if any(name == "ptxas" for _, name in live_processes(marker)):
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.005)
    return False


def interrupted_build(kiln, tmp_path, stop):
    """Starts a build, sends `stop` while ptxas runs; returns (status,
    files left in $TMPDIR, processes left running, files in the output)."""
    source = tmp_path / "many.py"
    source.write_text(many_kernels())
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    out = tmp_path / "out"
    marker = new_marker()
    process = subprocess.Popen(
        [kiln.binary, "build", str(source), "--emit", "fatbin", "-o", str(out), "--arch", "all",
         "-j", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=default_stop_signals,
        env=marked_environment(marker, TMPDIR=str(private_tmp), KILN_CACHE="0"))
    try:
        assert wait_for_ptxas(marker, process), (
            "ptxas never ran: " + (process.stderr.read().decode() if process.poll() is not None
                                   else "timeout"))
        process.send_signal(stop)
        status = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()
    leftover_files = sorted(str(p.relative_to(private_tmp)) for p in private_tmp.rglob("*"))
    outputs = sorted(p.name for p in out.iterdir()) if out.exists() else []
    return status, leftover_files, surviving_processes(marker), outputs


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_stopped_build_leaves_nothing_behind(kiln, tmp_path, stop):
    status, leftover_files, survivors, outputs = interrupted_build(kiln, tmp_path, stop)
    assert status == -stop, f"kiln should die of {stop.name}, not exit with {status}"
    assert leftover_files == [], f"temporary files left in $TMPDIR: {leftover_files}"
    assert survivors == [], f"processes outlived kiln: {survivors}"
    assert not any(".tmp-" in name for name in outputs), f"half-written outputs: {outputs}"
