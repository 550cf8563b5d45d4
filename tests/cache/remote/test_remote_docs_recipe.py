"""The remote cache recipe of docs/cache.md runs as shown: every `sh` block
of its "A CI recipe" section, each on a machine of its own (its own
configuration and cache folders), sharing the work folder and a Redis
server named by $KILN_REMOTE_CACHE, as CI runners and a developer's
machine share a repository and a cache service."""

import os
import pathlib
import re
import subprocess

from ..conftest import MODULE, kiln_binary

REPO = pathlib.Path(__file__).resolve().parents[3]


def recipe_blocks():
    text = (REPO / "docs" / "cache.md").read_text()
    section = text.split("### A CI recipe", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_the_remote_cache_recipe_runs_as_shown(tmp_path, redis_server):
    blocks = recipe_blocks()
    assert len(blocks) == 3, "the recipe is no longer key setup, CI runner, developer machine"
    server = redis_server()
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
            KILN_REMOTE_CACHE=server.url,
        )
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=work, env=env,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"block {number + 1} failed:\n{block}\n{result.stderr}"
        outputs.append(result.stdout + result.stderr)
    assert "remote bytes up" in outputs[1], outputs[1]
    assert re.search(r"cache .*: 0 local hits, [1-9]\d* remote hits, 0 compiled", outputs[2]), (
        f"the developer machine did not get every specialization from the remote:\n{outputs[2]}")
    assert not (tmp_path / "machine2" / "config" / "keys").exists(), (
        "the developer machine needed a private key")
