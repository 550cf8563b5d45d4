"""A built module beside the source file it was built from: when that file
has changed since the build, importing the module warns, once, with
kiln.StaleModuleWarning, naming the file and the command that rebuilds it;
the module still imports and runs the kernels as they were built. A source
as built, or none, says nothing."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
SOURCE = REPO_ROOT / "examples" / "vector_add.py"

IMPORT_TWICE = """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import vector_add
    import vector_add
import numpy as np
a = np.arange(4, dtype=np.float32)
out = np.zeros_like(a)
vector_add.add_kernel[1, 4](a, a, out)
print(out.tolist())
for warning in caught:
    print(warning.category.__module__ + "." + warning.category.__name__, str(warning.message))
"""


@pytest.fixture
def folder(build_module, tmp_path):
    copy = tmp_path / "module"
    shutil.copytree(build_module(SOURCE, "vector_add"), copy)
    return copy


def import_module(folder, package_dir):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(package_dir)]), KILN_TARGET="cpu")
    result = subprocess.run([sys.executable, "-c", IMPORT_TWICE], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    ran, *warnings = result.stdout.splitlines()
    assert ran == "[0.0, 2.0, 4.0, 6.0]", "the module must still run its kernels as built"
    return warnings


def test_an_edited_source_beside_the_module_warns_once_naming_it(folder, package_dir):
    (folder / "vector_add.py").write_text(SOURCE.read_text() + "\n# edited after the build\n")
    warnings = import_module(folder, package_dir)
    assert len(warnings) == 1, f"one warning for two imports, got {warnings}"
    category, _, message = warnings[0].partition(" ")
    assert category == "kiln.StaleModuleWarning"
    assert message.startswith(f"{folder / 'vector_add.py'} has changed since module 'vector_add' was built")
    assert "kiln build vector_add.py --module vector_add" in message, "the warning says how to rebuild"


def test_a_source_as_built_or_none_says_nothing(folder, package_dir):
    assert import_module(folder, package_dir) == [], "no source beside the module: no warning"
    shutil.copy(SOURCE, folder / "vector_add.py")
    assert import_module(folder, package_dir) == [], "the source as built: no warning"
