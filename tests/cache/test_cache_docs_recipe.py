"""The CI recipe of docs/cache.md runs as shown: every `sh` block of its
"Sharing a cache in CI" section, each on a machine of its own (its own
configuration and cache folders), sharing only the work folder, as CI jobs
share a repository checkout and artifacts."""

import re

from .conftest import run_recipe


def test_the_ci_recipe_runs_as_shown(tmp_path):
    outputs = run_recipe("## Sharing a cache in CI", tmp_path, 3, "key setup, job 1, job 2")
    assert "signed by 'ci'" in outputs[1], outputs[1]
    assert "imported" in outputs[2] and "signed by 'ci'" in outputs[2], outputs[2]
    assert re.search(r"cache .*: [1-9]\d* local hits, 0 remote hits, 0 compiled",
                     outputs[2]), outputs[2]
    assert not (tmp_path / "machine2" / "config" / "keys").exists(), "job 2 needed a private key"
