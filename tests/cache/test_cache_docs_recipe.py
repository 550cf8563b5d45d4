"""The CI recipe of docs/cache.md runs as shown: every `sh` block of its
"Sharing a cache in CI" section, each on a machine of its own (its own
configuration and cache folders), sharing only the work folder, as CI jobs
share a repository checkout and artifacts."""

import os
import pathlib
import re
import subprocess

from .conftest import MODULE, kiln_binary

REPO = pathlib.Path(__file__).resolve().parents[2]


def recipe_blocks():
    text = (REPO / "docs" / "cache.md").read_text()
    section = text.split("## Sharing a cache in CI", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_the_ci_recipe_runs_as_shown(tmp_path):
    blocks = recipe_blocks()
    assert len(blocks) == 3, "the recipe is no longer key setup, job 1, job 2"
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "kernels.py").write_text(MODULE)
    outputs = []
    for number, block in enumerate(blocks):
        machine = tmp_path / f"machine{number}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
        env.pop("CUDAARCHS", None)
        env.update(
            PATH=os.path.dirname(kiln_binary()) + os.pathsep + env["PATH"],
            KILN_CONFIG_DIR=str(machine / "config"),
            KILN_CACHE_DIR=str(machine / "cache"),
        )
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=work, env=env,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"block {number + 1} failed:\n{block}\n{result.stderr}"
        outputs.append(result.stdout + result.stderr)
    assert "signed by 'ci'" in outputs[1], outputs[1]
    assert "imported" in outputs[2] and "signed by 'ci'" in outputs[2], outputs[2]
    assert re.search(r"cache .*: [1-9]\d* local hits, 0 remote hits, 0 compiled",
                     outputs[2]), outputs[2]
    assert not (tmp_path / "machine2" / "config" / "keys").exists(), "job 2 needed a private key"
