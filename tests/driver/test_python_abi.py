"""Which CPython a kernel module is for: `kiln build --python-abi`.

By default a module is built once for every CPython (CPython's stable ABI,
`kernels.abi3.so`), without running any Python; a version tag (cp313,
cp313t) names a module for that version alone, and `interpreter` asks
--python for its EXT_SUFFIX, as Kiln did before it had the stable ABI."""

import json
import os
import subprocess
import sys
import sysconfig

import pytest

VECTOR_ADD_RUNS = """
import numpy as np
import vector_add
x = np.arange(100, dtype=np.float32)
out = np.zeros_like(x)
vector_add.vector_add[1, 128](out, x, x)
np.testing.assert_array_equal(out, x + x)
print(vector_add.__file__)
"""


def build(kiln, tmp_path, *options, env=None, source="vector_add.py"):
    out = tmp_path / "out"
    result = kiln("build", source, "--module", "vector_add", "-o", out, "--arch", "80", *options,
                  cwd=tmp_path, env=env)
    return result, out


@pytest.fixture
def vector_add_folder(repo_root, tmp_path):
    (tmp_path / "vector_add.py").write_text((repo_root / "examples" / "vector_add.py").read_text())
    return tmp_path


def test_a_module_is_built_for_the_stable_abi_without_running_python(kiln, vector_add_folder,
                                                                   build_dir):
    # No Python on PATH: naming an abi3 module needs none.
    env = dict(os.environ, PATH=str(vector_add_folder / "no-python-here"))
    result, out = build(kiln, vector_add_folder, env=env)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in out.iterdir()) == ["vector_add.abi3.so"]
    ran = subprocess.run([sys.executable, "-c", VECTOR_ADD_RUNS], cwd=out, capture_output=True,
                         text=True, env=dict(os.environ, KILN_TARGET="cpu",
                                             PYTHONPATH=str(build_dir / "python")))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().endswith("vector_add.abi3.so")


@pytest.mark.parametrize("abi, suffix", [
    ("cp313", ".cpython-313-{multiarch}.so"),
    ("cp313t", ".cpython-313t-{multiarch}.so"),
    ("cp310", ".cpython-310-{multiarch}.so"),
    ("abi3", ".abi3.so"),
    ("interpreter", sysconfig.get_config_var("EXT_SUFFIX")),  # what --python says
])
def test_each_python_abi_names_the_module_for_its_cpython(kiln, vector_add_folder, abi, suffix):
    result, out = build(kiln, vector_add_folder, "--python-abi", abi, "--python", sys.executable)
    assert result.returncode == 0, result.stderr
    expected = "vector_add" + suffix.format(multiarch=sysconfig.get_config_var("MULTIARCH"))
    assert [path.name for path in out.iterdir()] == [expected]


@pytest.mark.parametrize("abi, why", [
    ("cp39", "Python ABI 'cp39': Kiln's runtime needs CPython 3.10 or later"),
    ("cp312t", "free-threaded CPython begins with 3.13 (cp313t)"),
    ("py3", "unknown Python ABI 'py3': give abi3"),
    ("cp3", "unknown Python ABI 'cp3'"),
    ("abi4", "unknown Python ABI 'abi4'"),
])
def test_an_unknown_python_abi_is_a_usage_error(kiln, vector_add_folder, abi, why):
    result, out = build(kiln, vector_add_folder, "--python-abi", abi)
    assert result.returncode == 2, result.stderr
    assert why in result.stderr
    assert not out.exists()


def test_kiln_targets_tells_the_suffix_of_a_python_abi(kiln):
    result = kiln("targets", "--json", "--python-abi", "cp314t")
    python = json.loads(result.stdout)["python"]
    assert python == {"abi": "cp314t", "extension_suffix":
                      f".cpython-314t-{sysconfig.get_config_var('MULTIARCH')}.so"}
    assert json.loads(kiln("targets", "--json").stdout)["python"]["extension_suffix"] == ".abi3.so"
    bad = kiln("targets", "--python-abi", "cp2")
    assert bad.returncode == 2
    assert "unknown Python ABI 'cp2'" in bad.stderr


def test_an_older_build_that_cpython_would_import_instead_is_named(kiln, vector_add_folder):
    # A Kiln that named modules per version left one in the output folder:
    # CPython 3.11 imports vector_add.cpython-311-*.so before vector_add.abi3.so.
    out = vector_add_folder / "out"
    out.mkdir()
    older = out / f"vector_add.cpython-311-{sysconfig.get_config_var('MULTIARCH')}.so"
    older.write_bytes(b"\x7fELF an older build")
    result, _ = build(kiln, vector_add_folder)
    assert result.returncode == 0, result.stderr
    assert (f"warning: '{older}' is beside the module just built, '{out / 'vector_add.abi3.so'}', "
            "and the CPython it is named for imports it instead") in result.stderr
    assert older.exists(), "kiln deleted a file it did not write"

    # A module for one version is imported before any abi3 one: nothing to say.
    result, _ = build(kiln, vector_add_folder, "--python-abi", "cp313")
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr
