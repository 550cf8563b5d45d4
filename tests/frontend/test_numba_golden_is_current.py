"""The Numba reference types in numba_golden/ are Numba's types for the
examples (and the test modules in numba_golden/modules/) as they are now:
regenerating them with the pinned Numba gives the committed files. This keeps
the comparison in test_examples_match_numba.py honest when a module changes.
"""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent


@pytest.mark.skipif(importlib.util.find_spec("numba") is None
                    or importlib.util.find_spec("numba_cuda") is None,
                    reason="numba and numba-cuda are not installed")
def test_regenerated_numba_types_equal_the_committed_ones(repo_root, tmp_path):
    examples = sorted((repo_root / "examples").glob("*.py"))
    examples += sorted((HERE / "numba_golden" / "modules").glob("*.py"))
    env = dict(os.environ)
    env.setdefault("CUDA_HOME", "/usr/local/cuda")
    result = subprocess.run(
        [sys.executable, str(HERE / "numba_golden" / "dump_numba_types.py"),
         "--out-dir", str(tmp_path), *map(str, examples)],
        capture_output=True, text=True, cwd=repo_root, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    for generated in sorted(tmp_path.glob("*.json")):
        committed = HERE / "numba_golden" / generated.name
        assert committed.exists(), f"no committed reference for {generated.name}"
        assert generated.read_text() == committed.read_text(), (
            f"{generated.name} is stale: regenerate with\n"
            f"  CUDA_HOME=/usr/local/cuda .venv/bin/python "
            f"tests/frontend/numba_golden/dump_numba_types.py examples/*.py "
            f"tests/frontend/numba_golden/modules/*.py")
