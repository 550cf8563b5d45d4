"""A command line with a value that does not parse is a usage error, exit
status 2, whichever option the value belongs to; an input that cannot be
read is an error in the input, exit status 1 (docs/cli.md). Every error,
the command line's included, starts `kiln: error:`."""

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
    assert result.stderr.startswith("kiln: error: "), result.stderr


@pytest.mark.parametrize("args, command", [
    (["build", "{kernels}", "--emit", "ptx", "--no-such-option"], "kiln build"),
    (["build"], "kiln build"),
    (["frobnicate"], "kiln"),
    (["cache", "prune", "--older-than"], "kiln cache prune"),
    (["build", "{kernels}", "--emit", "ptx", "-Xptxas"], "kiln build"),
])
def test_command_line_mistakes_say_kiln_error_and_where_to_look(kiln, kernels, tmp_path, args, command):
    result = kiln(*[part.format(kernels=kernels) for part in args])
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("kiln: error: "), result.stderr
    assert lines[-1] == f"Run '{command} --help' for more information.", result.stderr


@pytest.mark.parametrize("args", [
    ["build", "{missing}", "--emit", "ptx", "-o", "{folder}"],
    ["check", "{missing}"],
    ["inspect", "{missing}"],
    ["audit", "{missing}"],
    ["cache", "import", "{missing}"],
])
def test_an_input_that_does_not_exist_is_an_input_error(kiln, tmp_path, args):
    missing = tmp_path / "no-such-file.py"
    command = [part.format(missing=missing, folder=tmp_path / "out") for part in args]
    extra = ["--cache-dir", tmp_path / "cache"] if command[0] == "cache" else []
    result = kiln(*command, *extra)
    assert result.returncode == 1, f"{' '.join(command)}: {result.returncode}\n{result.stderr}"
    assert result.stderr.startswith("kiln: error: "), result.stderr
    assert str(missing) in result.stderr, "the error names the file"
    assert "Traceback" not in result.stderr


def test_help_lists_the_exit_statuses(kiln):
    result = kiln("--help")
    assert result.returncode == 0
    assert "Exit status: 0 success; 1 " in result.stdout and "2 a usage error" in result.stdout
