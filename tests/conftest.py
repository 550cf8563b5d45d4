"""Shared fixtures for Kiln's Python test suites.

The tests run the `kiln` command that scripts/setup.sh built (build/driver/kiln
unless KILN overrides it) on files from the repository.
"""

import json
import os
import pathlib
import subprocess

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD_DIR = pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO_ROOT / "build"))


@pytest.fixture(scope="session")
def repo_root():
    return REPO_ROOT


@pytest.fixture(scope="session")
def build_dir():
    return BUILD_DIR


@pytest.fixture(scope="session")
def kiln():
    """Runs the kiln command: kiln(*args, cwd=None) -> CompletedProcess."""
    binary = os.environ.get("KILN", str(BUILD_DIR / "driver" / "kiln"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"kiln is not built at {binary}; run scripts/setup.sh")

    def run(*args, cwd=None, input=None, env=None):
        return subprocess.run(
            [binary, *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            input=input,
            env=env,
            timeout=300,
        )

    return run


@pytest.fixture(scope="session")
def kiln_check_json(kiln):
    """kiln check --json -v on one file, parsed."""

    def check(path, *extra):
        result = kiln("check", "--json", "-v", *extra, path)
        assert result.stdout, f"kiln check printed nothing; stderr:\n{result.stderr}"
        return result.returncode, json.loads(result.stdout)[0]

    return check
