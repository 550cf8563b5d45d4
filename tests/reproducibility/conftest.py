"""Fixtures of the reproducibility tests; the builds themselves are in
repro_builds.py."""

import pathlib
import shutil
import tempfile

import pytest


@pytest.fixture
def shared_tmp():
    """A folder every user can reach (pytest's tmp_path is root's alone), for
    checkouts another user builds."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="kiln-repro-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
