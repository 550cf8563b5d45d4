"""A command line with a value that does not parse is a usage error, exit
status 2, whichever option the value belongs to (docs/cli.md)."""

import pytest

KERNEL = """\
from numba import cuda, float32, void


@cuda.jit(void(float32[::1]))
def kernel(a):
    a[0] = 1
"""


@pytest.fixture
def kernels(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(KERNEL)
    return path


@pytest.mark.parametrize("args, message", [
    (["build", "{kernels}", "--emit", "ptx", "-o", "{folder}", "--arch", "sm_12"], "--arch"),
    (["build", "{kernels}", "--emit", "ptx", "-o", "{folder}", "--arch", "volta"], "not an architecture"),
    (["build", "{kernels}", "--emit", "ptx", "-o", "{folder}", "--max-size", "lots"], "--max-size"),
    (["build", "{kernels}", "--emit", "ptx", "-o", "{folder}", "--opt", "2"], "--opt"),
    (["build", "{kernels}", "--emit", "ptx", "-o", "{folder}", "--jobs", "many"], "--jobs"),
    (["targets", "--arch", "volta"], "not an architecture"),
    (["audit", "{folder}", "--require-arch", "sm_12"], "--require-arch"),
    (["cache", "prune", "--older-than", "soon"], "--older-than"),
    (["cache", "prune", "--max-size", "lots"], "--max-size"),
])
def test_an_invalid_option_value_exits_2(kiln, kernels, tmp_path, args, message):
    command = [part.format(kernels=kernels, folder=tmp_path) for part in args]
    result = kiln(*command, "--cache-dir", tmp_path / "cache") if command[0] == "cache" else (
        kiln(*command))
    assert result.returncode == 2, (
        f"{' '.join(command)} should be a usage error (2), not {result.returncode}:\n"
        f"{result.stderr}")
    assert message in result.stderr, result.stderr
