"""Nothing kiln reads or runs can make it wait forever: an interpreter that
never answers is stopped after $KILN_PYTHON_TIMEOUT seconds, and inputs that
are not regular files (/dev/zero, a FIFO) are refused. Every run here has a
timeout that fails the test instead of hanging it."""

import os
import subprocess

import pytest

from process_census import marked_environment, new_marker, surviving_processes

KERNEL = """\
from numba import cuda, float32, void


@cuda.jit(void(float32[::1]))
def kernel(a):
    a[0] = 1
"""

HOST_MODULE = """\
from kiln import cuda


def compute_scale():
    return 2.0


SCALE = compute_scale()


@cuda.jit("void(float32[::1])")
def scale(a):
    a[0] = a[0] * SCALE
"""


def run(kiln, *args, env=None):
    return subprocess.run([kiln.binary, *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.fixture
def stuck_python(tmp_path):
    """An "interpreter" that never answers, and a child of it that would
    outlive it."""
    path = tmp_path / "stuck-python"
    path.write_text("#!/bin/sh\nsleep 1000 &\nwait\n")
    path.chmod(0o755)
    return path


def test_a_python_that_never_answers_is_stopped(kiln, tmp_path, stuck_python):
    kernels = tmp_path / "kernels.py"
    kernels.write_text(KERNEL)
    marker = new_marker()
    # The build asks Python for the suffix that names the module.
    result = run(kiln, "build", kernels, "--module", "kernels", "-o", tmp_path / "out",
                 "--python-abi", "interpreter", "--python", stuck_python,
                 env=marked_environment(marker, KILN_PYTHON_TIMEOUT="2", KILN_CACHE="0"))
    assert result.returncode == 1, result.stderr
    assert "stuck-python did not finish within 2 seconds" in result.stderr, result.stderr
    assert surviving_processes(marker) == [], "the interpreter's processes outlived kiln"


def test_host_values_from_a_python_that_never_answers_are_a_warning(kiln, tmp_path, stuck_python):
    module = tmp_path / "host.py"
    module.write_text(HOST_MODULE)
    marker = new_marker()
    result = run(kiln, "check", module, "--python", stuck_python,
                 env=marked_environment(marker, KILN_PYTHON_TIMEOUT="2"))
    assert "did not finish within 2 seconds" in result.stderr, result.stderr
    assert surviving_processes(marker) == [], "the interpreter's processes outlived kiln"


def test_a_bad_python_timeout_is_an_error(kiln, tmp_path):
    kernels = tmp_path / "kernels.py"
    kernels.write_text(KERNEL)
    result = run(kiln, "build", kernels, "--module", "kernels", "-o", tmp_path / "out",
                 "--python-abi", "interpreter", env={**os.environ, "KILN_PYTHON_TIMEOUT": "soon"})
    assert result.returncode == 1
    assert "KILN_PYTHON_TIMEOUT must be a whole number of seconds above 0, not 'soon'" in (
        result.stderr)


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "kernels.py"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", [
    ["check", "{input}"],
    ["build", "{input}", "--emit", "ptx", "-o", "{out}"],
    ["signatures", "list", "{input}"],
    ["audit", "{input}"],
    ["inspect", "{input}"],
    ["cache", "import", "{input}", "--cache-dir", "{out}"],
])
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_an_input_that_is_not_a_regular_file_is_refused(kiln, tmp_path, fifo, command, kind):
    source = str(fifo) if kind == "fifo" else "/dev/zero"
    args = [part.format(input=source, out=tmp_path / "out") for part in command]
    result = run(kiln, *args)
    assert result.returncode == 1, f"{args}: {result.returncode}\n{result.stderr}"
    assert f"'{source}': not a regular file" in result.stderr, f"{args}:\n{result.stderr}"


def test_trusted_keys_that_are_not_a_regular_file_are_refused(kiln, tmp_path, fifo):
    archive = tmp_path / "cache.tar"
    archive.write_bytes(b"not read: the keys come first")
    result = run(kiln, "cache", "import", archive, "--cache-dir", tmp_path / "cache",
                 "--trusted-keys", fifo)
    assert result.returncode == 1, result.stderr
    assert f"'{fifo}': not a regular file" in result.stderr, result.stderr
