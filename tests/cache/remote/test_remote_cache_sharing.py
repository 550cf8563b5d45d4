"""Machines share specializations through a remote cache: what one machine
compiled, another gets from the server instead of compiling, byte for byte
the same; then from its own local cache. Read-only clients never write;
`kiln cache stats` counts the remote's traffic; concurrent builds of many
machines agree; a different compiler never reads another's entries."""

import re

import pytest

from .conftest import (assert_every_lookup, assert_like_without_remote, assert_no_remote_warning)
from .remote_servers import OBJECT_KEY, REDIS_PREFIX, ClosedPort, RedisServer, WebDavServer


def using(url, *attributes):
    """`--remote-cache URL|ATTRIBUTE|...`"""
    return ["--remote-cache", "|".join([url, *attributes])]


def test_a_second_machine_gets_every_specialization_from_the_remote(
        remote, machine, reference, lookups, warm_lookups):
    a, b = machine("a"), machine("b")
    b.trust(a)
    first = a.kiln_build(*using(remote.url))
    assert_every_lookup(first, "compiled", lookups)
    assert remote.objects(), "machine A's build stored nothing on the remote"
    second = b.kiln_build(*using(remote.url))
    assert_every_lookup(second, "remote hit", warm_lookups)
    assert second.outputs == first.outputs, "machine B's extension module differs from A's"
    assert_like_without_remote(second, reference)
    third = b.kiln_build(*using(remote.url))
    assert_every_lookup(third, "local hit", warm_lookups)
    assert third.outputs == first.outputs
    for build in (first, second, third):
        assert_no_remote_warning(build)


def test_a_warm_remote_is_asked_in_a_few_round_trips_not_one_per_entry(
        remote, machine, slow_proxy, warm_lookups):
    """The build knows most of its keys before it looks any up: it asks
    for them together (Redis pipelining, parallel HTTP requests), so a
    distant server costs it a few round trips, not one per entry."""
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.kiln_build(*using(remote.url))
    proxy = slow_proxy(remote, 0.3)
    build = b.kiln_build(*using(proxy.url_for(remote.url)), jobs=1)
    assert_every_lookup(build, "remote hit", warm_lookups)
    assert_no_remote_warning(build)
    assert proxy.serial_waits() <= 4, (
        f"{warm_lookups} remote hits took {proxy.serial_waits()} round trips one after another")


def test_objects_are_stored_under_their_keys(remote, machine):
    machine("a").kiln_build(*using(remote.url))
    if isinstance(remote, RedisServer):
        stored = remote.keys()
        assert stored and all(k.startswith(REDIS_PREFIX) and OBJECT_KEY.match(k[len(REDIS_PREFIX):])
                              for k in stored), f"Redis keys are not all kiln:<64 hex>: {stored}"
    else:
        stored = remote.files()
        assert stored and all(OBJECT_KEY.match(f) for f in stored), (
            f"the flat layout is not <base>/<64 hex> for every object: {stored}")


@pytest.mark.parametrize("layout", ["flat", "subdirs", "bazel"])
def test_each_webdav_layout_puts_objects_where_it_says_and_reads_them_back(
        webdav_server, machine, layout, warm_lookups):
    server = webdav_server(layout=layout)
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.kiln_build(*using(server.url, f"layout={layout}"))
    files = server.files()
    assert files, f"nothing stored with layout={layout}"
    assert files == sorted(server.object_path(k) for k in server.objects()), (
        f"files outside layout={layout}: {files}")
    assert_every_lookup(b.kiln_build(*using(server.url, f"layout={layout}")), "remote hit",
                        warm_lookups)


def test_a_read_only_remote_is_never_written(remote, machine, reference, warm_lookups):
    writer, reader = machine("writer"), machine("reader")
    reader.trust(writer)
    alone = reader.kiln_build(*using(remote.url, "read-only"))
    assert remote.objects() == [], "a read-only client stored objects"
    assert_like_without_remote(alone, reference)

    writer.kiln_build(*using(remote.url))
    filled = {key: remote.read_object(key) for key in remote.objects()}
    webdav = isinstance(remote, WebDavServer)
    requests_before = len(remote.requests()) if webdav else 0
    other = reader.write("other.py")  # a module the remote has nothing of: every lookup misses
    reader.kiln_build(*using(remote.url, "read-only"), module=other)
    reader.run("cache", "clear", check=True)
    hits = reader.kiln_build(*using(remote.url, "read-only"))
    assert_every_lookup(hits, "remote hit", warm_lookups)
    after = {key: remote.read_object(key) for key in remote.objects()}
    assert after == filled, "a read-only client changed what the remote holds"
    if webdav:
        writes = [r for r in remote.requests()[requests_before:] if r[0] not in ("GET", "HEAD")]
        assert not writes, f"a read-only client sent {writes}"


def stat(text, words):
    """The number on the line of `kiln cache stats` that names `words`."""
    found = re.search(rf"^.*\b{words}\b\D*?(\d+(?:\.\d+)?)", text, re.M | re.I)
    assert found, f"`kiln cache stats` has no line with {words!r} and a number:\n{text}"
    return float(found[1])


STAT_WORDS = ("remote hits", "remote misses", "remote errors", "remote bytes down",
              "remote bytes up")


def test_cache_stats_count_the_remotes_hits_misses_errors_and_bytes(remote, machine):
    a, b, c = machine("a"), machine("b"), machine("c")
    b.trust(a)
    a.kiln_build(*using(remote.url))
    b.kiln_build(*using(remote.url))
    with ClosedPort() as closed:
        c.kiln_build(*using(f"redis://127.0.0.1:{closed.port}"))
    uploaded, downloaded, failed = a.stats_text(), b.stats_text(), c.stats_text()
    for text in (uploaded, downloaded, failed):
        for words in STAT_WORDS:
            stat(text, words)
    assert stat(uploaded, "remote misses") > 0 and stat(uploaded, "remote bytes up") > 0, uploaded
    assert stat(uploaded, "remote hits") == 0, uploaded
    assert stat(downloaded, "remote hits") > 0 and stat(downloaded, "remote bytes down") > 0, (
        downloaded)
    assert stat(downloaded, "remote misses") == 0 and stat(downloaded, "remote errors") == 0, (
        downloaded)
    assert stat(failed, "remote errors") > 0, failed


def test_sixteen_concurrent_builds_on_four_machines_share_one_remote(
        remote, machine, reference, lookups, warm_lookups):
    machines = [machine(f"m{n}") for n in range(4)]
    for each in machines:
        each.trust(*(other for other in machines if other is not each))
    running = [each.start_build(*using(remote.url)) for each in machines for _ in range(4)]
    builds = [build.finish() for build in running]
    for build in builds:
        assert_like_without_remote(build, reference)
        # Each build found what the others had stored by then, or compiled it.
        assert warm_lookups <= len(build.statuses) <= lookups, build.summary()
    assert remote.objects(), "sixteen builds stored nothing on the remote"
    late = machine("late")
    late.trust(*machines)
    assert_every_lookup(late.kiln_build(*using(remote.url)), "remote hit", warm_lookups)


def test_a_different_compiler_never_reads_anothers_entries(remote, machine, lookups):
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.kiln_build(*using(remote.url))
    other = dict(b.env, KILN_CACHE_TEST_KILN_VERSION="other")
    assert_every_lookup(b.kiln_build(*using(remote.url), env=other), "compiled", lookups)
