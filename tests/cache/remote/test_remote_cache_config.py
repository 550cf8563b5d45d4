"""How builds name their remotes: `--remote-cache URL` (repeatable, tried in
order), KILN_REMOTE_CACHE (space-separated URLs), `--no-remote-cache`, and
the attributes after a URL (`|shards=...`, `|upload-wait=...`); Redis over
a unix socket."""

import pytest

from .conftest import assert_every_lookup, assert_no_remote_warning


def using(url, *attributes):
    return ["--remote-cache", "|".join([url, *attributes])]


def object_reads(server):
    """GETs of objects the WebDAV server has answered."""
    return [r for r in server.requests() if r[0] == "GET"]


def test_kiln_remote_cache_names_the_remotes_when_no_flag_does(
        redis_server, webdav_server, machine, lookups, warm_lookups):
    redis, webdav = redis_server(), webdav_server()
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.env["KILN_REMOTE_CACHE"] = f"{redis.url} {webdav.url}"
    b.env["KILN_REMOTE_CACHE"] = f"{redis.url} {webdav.url}"
    assert_every_lookup(a.kiln_build(), "compiled", lookups)
    assert redis.objects(), "a build with KILN_REMOTE_CACHE stored nothing on its first remote"
    assert_every_lookup(b.kiln_build(), "remote hit", warm_lookups)


def test_remotes_are_tried_in_order_until_one_has_the_entry(
        redis_server, webdav_server, machine, warm_lookups):
    redis, webdav = redis_server(), webdav_server()
    a, b, c = machine("a"), machine("b"), machine("c")
    for reader in (b, c):
        reader.trust(a)
    a.kiln_build(*using(webdav.url))
    assert webdav.objects() and not redis.objects()
    # The first remote has nothing: every entry comes from the second.
    found = b.kiln_build(*using(redis.url), *using(webdav.url))
    assert_every_lookup(found, "remote hit", warm_lookups)
    assert redis.reads() > 0, "the first remote was not asked"
    # Both have everything: the first answers, the second is not asked.
    a.run("cache", "clear", check=True)
    a.kiln_build(*using(redis.url))
    assert redis.objects()
    before = len(object_reads(webdav))
    assert_every_lookup(c.kiln_build(*using(redis.url), *using(webdav.url)), "remote hit",
                        warm_lookups)
    assert len(object_reads(webdav)) == before, (
        "the second remote was asked for entries the first had")


def test_no_remote_cache_turns_off_the_remotes_the_environment_names(
        webdav_server, machine, lookups):
    webdav = webdav_server()
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.kiln_build(*using(webdav.url))
    answered = len(webdav.requests())
    b.env["KILN_REMOTE_CACHE"] = webdav.url
    build = b.kiln_build("--no-remote-cache")
    assert_every_lookup(build, "compiled", lookups)
    assert_no_remote_warning(build)
    assert len(webdav.requests()) == answered, "--no-remote-cache still talked to the remote"


def test_redis_over_a_unix_socket(redis_server, machine, warm_lookups):
    redis = redis_server(unix_socket=True)
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.kiln_build(*using(redis.url))
    assert redis.objects(), f"nothing stored through {redis.url}"
    assert_every_lookup(b.kiln_build(*using(redis.url)), "remote hit", warm_lookups)


def test_shards_spread_the_objects_over_their_servers(
        webdav_server, machine, lookups, warm_lookups):
    # As ccache's shards: '*' in the URL is replaced by the shard's name.
    first, second = webdav_server(), webdav_server()
    sharded = ["http://127.0.0.1:*/cache", f"shards={first.port},{second.port}"]
    a, b, c = machine("a"), machine("b"), machine("c")
    for reader in (b, c):
        reader.trust(a)
    a.kiln_build(*using(*sharded))
    on_first, on_second = set(first.objects()), set(second.objects())
    assert on_first and on_second, (
        f"the shards hold {len(on_first)} and {len(on_second)} objects: not spread over both")
    assert not on_first & on_second, "an object is on both shards"
    assert_every_lookup(b.kiln_build(*using(*sharded)), "remote hit", warm_lookups)
    # One shard alone has only its part.
    part = c.kiln_build(*using(first.url))
    assert 0 < part.count("remote hit") < lookups, part.summary()


@pytest.mark.parametrize("attribute",
                         ["upload-wait=5000", "connect-timeout=500|operation-timeout=5000"])
def test_time_attributes_keep_a_healthy_remote_working(
        redis_server, machine, attribute, warm_lookups):
    redis = redis_server()
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.kiln_build(*using(redis.url, attribute))
    # The uploads are on the server when the build has exited.
    assert_every_lookup(b.kiln_build(*using(redis.url, attribute)), "remote hit", warm_lookups)


@pytest.mark.parametrize("remote, says", [
    ("ftp://cache.example/kiln", "redis://"),
    ("redis://127.0.0.1:1|colour=blue", "unknown attribute 'colour'"),
    ("http://u:hunter2@127.0.0.1:1/x|layout=deep", "flat, subdirs, bazel"),
])
def test_a_remote_that_cannot_be_used_is_a_warning_not_a_failed_build(
        machine, reference, lookups, remote, says):
    build = machine("a").kiln_build("--remote-cache", remote)
    assert_every_lookup(build, "compiled", lookups)
    assert build.outputs == reference.outputs, "the output differs from a build without a remote"
    warnings = [line for line in build.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and says in warnings[0], build.stderr
    assert "hunter2" not in build.stderr, "the warning shows the URL's password"


def test_cache_stats_json_counts_the_remote(redis_server, machine, lookups, warm_lookups):
    redis = redis_server()
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.kiln_build(*using(redis.url))
    b.kiln_build(*using(redis.url))
    remote = b.stats()["remote"]
    assert remote["hits"] == warm_lookups and remote["misses"] == 0, remote
    assert remote["bytes_down"] > 0 and remote["errors"] == 0 and remote["rejected"] == 0, remote
    uploaded = a.stats()["remote"]
    assert uploaded["uploads"] == lookups and uploaded["bytes_up"] > 0, uploaded
