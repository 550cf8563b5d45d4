"""`kiln signatures list|add|prune`: the signatures file that recorded test
runs write, shown, extended and cleaned from the command line, in the same
form and under the same lock as the recorders."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

PACKAGE_DIR = pathlib.Path(os.environ.get(
    "KILN_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] / "build")) / "python"
sys.path.insert(0, str(PACKAGE_DIR))
from kiln import signature_file  # noqa: E402  (the build's kiln package)

KERNELS = '''
from kiln import cuda


@cuda.jit
def scale(out, x):
    out[0] = x[0]


@cuda.jit(device=True)
def helper(x):
    return x
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent('''
        [project]
        name = "demo"

        [tool.kiln.signatures]
        "pkg.kernels.helper" = "float32(float32)"
    '''))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kernels.py").write_text(KERNELS)
    (tmp_path / "pkg" / "sub").mkdir()
    return tmp_path


def test_add_writes_what_recording_runs_write(project, kiln):
    result = kiln("signatures", "add", "pkg.kernels.scale", "void(float64[::1], float64[::1])",
                  "void(float32[::1], float32[::1])", cwd=project / "pkg" / "sub")
    assert result.returncode == 0, result.stderr
    written = (project / "kiln-signatures.toml").read_text()
    assert written == signature_file._render({"pkg.kernels.scale": [
        "void(float32[::1], float32[::1])", "void(float64[::1], float64[::1])"]}), \
        "the file goes beside pyproject.toml, in the recorders' form"
    again = kiln("signatures", "add", "pkg.kernels.scale", "void(float32[::1], float32[::1])",
                 cwd=project)
    assert again.returncode == 0 and (project / "kiln-signatures.toml").read_text() == written


def test_names_beyond_ascii_are_written_as_recorders_write_them(project, kiln):
    kernel, signature = "pkg.kernels.größe_𝛼", "void(float32[::1],\tint64)"
    result = kiln("signatures", "add", kernel, signature, cwd=project)
    assert result.returncode == 0, result.stderr
    written = (project / "kiln-signatures.toml").read_text()
    assert written == signature_file._render({kernel: [signature]})
    assert signature_file.read(str(project / "kiln-signatures.toml")) == {kernel: [signature]}


def test_list_shows_both_tables(project, kiln):
    signature_file.add(str(project / "kiln-signatures.toml"), "pkg.kernels.scale",
                       "void(int32[::1], int32[::1])")
    result = kiln("signatures", "list", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "kiln-signatures.toml",
        "  pkg.kernels.scale",
        "    void(int32[::1], int32[::1])",
        "pyproject.toml [tool.kiln.signatures]",
        "  pkg.kernels.helper",
        "    float32(float32)",
    ]
    listed = json.loads(kiln("signatures", "list", "--json", cwd=project).stdout)
    assert [(entry["kernel"], entry["signatures"]) for entry in listed] == [
        ("pkg.kernels.scale", ["void(int32[::1], int32[::1])"]),
        ("pkg.kernels.helper", ["float32(float32)"]),
    ]


def test_prune_removes_entries_of_kernels_that_are_gone(project, kiln):
    path = project / "kiln-signatures.toml"
    for kernel in ("pkg.kernels.scale", "pkg.kernels.removed", "pkg.gone.kernel", "plain"):
        signature_file.add(str(path), kernel, "void(int32[::1])")
    before = path.read_text()

    dry = kiln("signatures", "prune", "--dry-run", cwd=project)
    assert dry.returncode == 0, dry.stderr
    assert "would remove pkg.kernels.removed" in dry.stdout
    assert path.read_text() == before, "--dry-run must change nothing"

    result = kiln("signatures", "prune", path, cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (f"removed pkg.kernels.removed: {project / 'pkg' / 'kernels.py'} "
                                     "defines no decorated function 'removed'")
    assert "kept pkg.gone.kernel: cannot find the module pkg.gone" in result.stderr
    assert sorted(signature_file.read(str(path))) == ["pkg.gone.kernel", "pkg.kernels.scale", "plain"]


def test_a_malformed_file_is_an_error_naming_where_and_is_left_alone(project, kiln):
    path = project / "kiln-signatures.toml"
    path.write_text('[signatures]\n"pkg.kernels.scale" = [\n')
    for command in (["list"], ["add", "pkg.kernels.scale", "void(int32[::1])"], ["prune"]):
        result = kiln("signatures", *command, cwd=project)
        assert result.returncode == 1, command
        assert "kiln-signatures.toml:" in result.stderr and "Traceback" not in result.stderr
    assert path.read_text() == '[signatures]\n"pkg.kernels.scale" = [\n'


@pytest.mark.parametrize("table, complaint", [
    ('[signatures]\n"pkg.kernels.scale" = 3\n',
     "the signatures of 'pkg.kernels.scale' must be a string or a list of strings"),
    ('[signatures]\n"pkg.kernels.scale" = ["void(int32[::1])", 3]\n',
     "the signatures of 'pkg.kernels.scale' must be a string or a list of strings"),
    ('signatures = "void(int32[::1])"\n', "[signatures] is not a table"),
    ('[signatures]\n"pkg.kernels.scale" = [\n', "kiln-signatures.toml:2:25: Error while parsing array"),
])
def test_a_file_that_is_toml_but_no_signature_table_says_what_is_wrong(project, kiln, table,
                                                                       complaint):
    path = project / "kiln-signatures.toml"
    path.write_text(table)
    result = kiln("signatures", "list", cwd=project)
    assert result.returncode == 1
    assert complaint in result.stderr, result.stderr
    assert path.read_text() == table


def test_add_needs_a_module_qualified_name(project, kiln):
    result = kiln("signatures", "add", "scale", "void(int32[::1])", cwd=project)
    assert result.returncode == 1
    assert "'scale' is not a module-qualified kernel name" in result.stderr
    assert not (project / "kiln-signatures.toml").exists()


def test_commands_and_recorders_at_once_lose_nothing(project, kiln):
    path = project / "kiln-signatures.toml"
    binary = kiln.binary
    processes = [subprocess.Popen([binary, "signatures", "add", f"pkg.kernels.k{i}",
                                   f"void(int{8 * 2 ** (i % 4)}[::1])"], cwd=project)
                 for i in range(6)]
    processes += [subprocess.Popen(
        [sys.executable, "-c", f"from kiln import signature_file; "
                               f"signature_file.add({str(path)!r}, 'pkg.kernels.r{i}', 'void(float32[::1])')"],
        env={"PYTHONPATH": str(PACKAGE_DIR)}) for i in range(6)]
    assert all(process.wait(timeout=120) == 0 for process in processes)
    table = signature_file.read(str(path))
    assert sorted(table) == sorted([f"pkg.kernels.k{i}" for i in range(6)] +
                                   [f"pkg.kernels.r{i}" for i in range(6)])
