"""Shared fixtures for Kiln's Python test suites.

The tests run the `kiln` command that scripts/setup.sh built (build/driver/kiln
unless KILN overrides it) on files from the repository.
"""

import atexit
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent

# Builds in the tests fill a cache of their own, never the user's
# ~/.cache/kiln (tests of the cache itself pass their own folders).
if "KILN_CACHE_DIR" not in os.environ:
    os.environ["KILN_CACHE_DIR"] = tempfile.mkdtemp(prefix="kiln-test-cache-")
    atexit.register(shutil.rmtree, os.environ["KILN_CACHE_DIR"], ignore_errors=True)
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

    run.binary = binary
    return run


@pytest.fixture(scope="session")
def kiln_check_json(kiln):
    """kiln check --json -v on one file, parsed."""

    def check(path, *extra):
        result = kiln("check", "--json", "-v", *extra, path)
        assert result.stdout, f"kiln check printed nothing; stderr:\n{result.stderr}"
        return result.returncode, json.loads(result.stdout)[0]

    return check

