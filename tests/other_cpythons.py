"""The CPythons other than the one running the tests, for the tests that
run one build of Kiln's runtime and of kernel modules on several: pyenv's
(where scripts/setup.sh finds them too, to download NumPy for each), else
python3.X on PATH's usual folders."""

import glob
import os
import pathlib

import pytest

from checked_run import run_checked


def find_cpython(minor):
    """An interpreter of CPython 3.<minor> on this machine, or None."""
    pyenv = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv"))
    candidates = sorted(glob.glob(str(pyenv / "versions" / f"3.{minor}.*" / "bin" /
                                      f"python3.{minor}")))
    candidates += [f"/usr/bin/python3.{minor}", f"/usr/local/bin/python3.{minor}"]
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def cpython_environment(minor, wheelhouse, folder):
    """A fresh virtual environment of CPython 3.<minor> in `folder` with
    NumPy from `wheelhouse`, as its python; a skip where this machine has no
    such CPython."""
    python = find_cpython(minor)
    if python is None:
        pytest.skip(f"this machine has no CPython 3.{minor}")
    if not list(pathlib.Path(wheelhouse).glob(f"numpy-*-cp3{minor}-cp3{minor}-*.whl")):
        pytest.fail(f"no NumPy wheel for CPython 3.{minor} in {wheelhouse}: scripts/setup.sh "
                    "downloads one for every CPython it finds")
    venv = pathlib.Path(folder) / "venv"
    run_checked([python, "-m", "venv", venv])
    run_checked([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-index",
                 "--disable-pip-version-check", "--find-links", wheelhouse, "numpy"])
    return venv / "bin" / "python"
