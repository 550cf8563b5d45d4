"""The remote cache recipe of docs/cache.md runs as shown: every `sh` block
of its "A CI recipe" section, each on a machine of its own, sharing the work
folder and a Redis server named by $KILN_REMOTE_CACHE, as CI runners and a
developer's machine share a repository and a cache service."""

import re

from ..conftest import run_recipe


def test_the_remote_cache_recipe_runs_as_shown(tmp_path, redis_server):
    server = redis_server()
    outputs = run_recipe("### A CI recipe", tmp_path, 3,
                         "key setup, CI runner, developer machine", KILN_REMOTE_CACHE=server.url)
    assert "remote bytes up" in outputs[1], outputs[1]
    assert re.search(r"cache .*: 0 local hits, [1-9]\d* remote hits, 0 compiled", outputs[2]), (
        f"the developer machine did not get every specialization from the remote:\n{outputs[2]}")
    assert not (tmp_path / "machine2" / "config" / "keys").exists(), (
        "the developer machine needed a private key")
