"""A remote that fails never fails a build: unreachable, killed or paused
in the middle of a build, slow, full, refusing large objects, or serving
corrupted or swapped objects. Every build exits 0 and writes what a build
without the remote writes, and says so in ONE warning line per remote,
naming it."""

import os
import subprocess

import pytest

from .conftest import (STALL_BOUND, displayed, assert_every_lookup, assert_like_without_remote,
                       assert_one_warning)
from ..conftest import kiln_binary
from .remote_servers import ClosedPort, established_connections


def using(url, *attributes):
    return ["--remote-cache", "|".join([url, *attributes])]


@pytest.fixture
def filled(remote, machine):
    """The remote, after machine A built the module with it; and machine B,
    which trusts A and has an empty cache."""
    a, b = machine("a"), machine("b")
    b.trust(a)
    a.kiln_build(*using(remote.url))
    assert remote.objects(), "machine A's build stored nothing on the remote"
    return remote, b


@pytest.mark.parametrize("scheme", ["redis", "http"])
def test_an_unreachable_remote_fails_no_build(machine, reference, scheme):
    with ClosedPort() as closed:
        url = f"{scheme}://127.0.0.1:{closed.port}" + ("/cache" if scheme == "http" else "")
        build = machine("a").kiln_build(*using(url))
    assert_like_without_remote(build, reference)
    assert_one_warning(build, url)


def test_without_libcurl_an_http_remote_fails_no_build(webdav_server, machine, reference):
    """kiln opens libcurl only for HTTP remotes; where it cannot, the remote
    is one warning saying which library is missing, and the build goes on."""
    server = webdav_server()
    a = machine("a")
    build = a.kiln_build(*using(server.url),
                         env=dict(a.env, KILN_LIBCURL="/nonexistent/libcurl.so.4"))
    assert_like_without_remote(build, reference)
    assert_one_warning(build, server.url, "/nonexistent/libcurl.so.4")
    assert server.objects() == [], "a remote kiln could not reach holds objects"


def test_kiln_links_no_libcurl():
    """libcurl and the libraries it needs are mapped only by builds with an
    HTTP remote, not at every start of kiln."""
    needed = subprocess.run(["readelf", "-d", kiln_binary()], capture_output=True, text=True, check=True)
    assert "libcurl" not in needed.stdout, f"kiln links libcurl:\n{needed.stdout}"


def test_a_server_killed_mid_build_fails_no_build(remote, machine, reference):
    # One job: the build goes on compiling (and uploading) for a while
    # after its first upload arrives.
    running = machine("a").start_build(*using(remote.url), jobs=1)
    killed = running.act_when(lambda: bool(remote.objects()), remote.kill)
    build = running.finish()
    assert killed, "the build ended before its first upload arrived: nothing was killed mid-build"
    assert_like_without_remote(build, reference)
    assert_one_warning(build, remote.url)


def test_a_server_killed_while_a_build_waits_for_its_answer_fails_no_build(filled, reference):
    remote, b = filled
    remote.pause()
    running = b.start_build(*using(remote.url))
    killed = running.act_when(lambda: established_connections(remote.port) > 0, remote.kill)
    build = running.finish(STALL_BOUND)
    assert killed, "the build ended without connecting to the remote"
    assert_like_without_remote(build, reference)
    assert_one_warning(build, remote.url)


@pytest.mark.parametrize("attributes", [(), ("connect-timeout=100", "operation-timeout=300")],
                         ids=["default time-outs", "short time-outs"])
def test_a_server_paused_before_the_build_does_not_stall_it(filled, reference, attributes):
    remote, b = filled
    remote.pause()
    build = b.kiln_build(*using(remote.url, *attributes), timeout=STALL_BOUND)
    assert_like_without_remote(build, reference)
    assert_one_warning(build, remote.url)


def test_a_server_paused_mid_build_does_not_stall_it(remote, machine, reference):
    running = machine("a").start_build(*using(remote.url), jobs=1)
    paused = running.act_when(lambda: bool(remote.objects()), remote.pause)
    build = running.finish(STALL_BOUND)
    remote.resume()
    assert paused, "the build ended before its first upload arrived: nothing was paused mid-build"
    assert_like_without_remote(build, reference)
    assert_one_warning(build, remote.url)


def test_a_server_answering_late_does_not_stall_the_build(filled, slow_proxy, reference):
    remote, b = filled
    url = slow_proxy(remote, 2.0).url_for(remote.url)
    build = b.kiln_build(*using(url, "operation-timeout=500"), timeout=STALL_BOUND)
    assert_like_without_remote(build, reference)
    assert_one_warning(build, url)


def test_a_server_answering_just_inside_its_time_out_is_dropped_after_three(
        filled, slow_proxy, reference):
    """Each answer arrives before the time-out, but after half of it: were
    the remote kept, every one of the build's round trips would wait that
    long. (Batched lookups may bring many hits in one of them.)"""
    remote, b = filled
    proxy = slow_proxy(remote, 1.5)
    url = proxy.url_for(remote.url)
    build = b.kiln_build(*using(url, "operation-timeout=3000"), timeout=STALL_BOUND)
    assert_like_without_remote(build, reference)
    assert_one_warning(build, url)
    assert proxy.serial_waits() <= 6, (
        f"the build kept asking a remote that answers slowly: it waited {proxy.serial_waits()} "
        f"times in a row; {build.summary()}")


def corrupted(data, how):
    if how == "garbage":
        return os.urandom(len(data))
    if how == "one byte flipped":
        flipped = bytearray(data)
        flipped[len(flipped) // 2] ^= 0x01
        return bytes(flipped)
    assert how == "truncated"
    return data[:len(data) // 2]


@pytest.mark.parametrize("how", ["garbage", "one byte flipped", "truncated"])
def test_corrupted_objects_are_rejected(filled, reference, lookups, how):
    remote, b = filled
    for key in remote.objects():
        remote.write_object(key, corrupted(remote.read_object(key), how))
    build = b.kiln_build(*using(remote.url))
    assert_every_lookup(build, "compiled", lookups)
    assert_like_without_remote(build, reference)
    assert_one_warning(build, remote.url, "rejected")


def test_an_object_served_for_another_key_is_rejected(filled, reference, lookups):
    remote, b = filled
    keys = remote.objects()
    contents = [remote.read_object(key) for key in keys]
    assert len(set(contents)) == len(contents), "two entries' objects are identical"
    for key, content in zip(keys, contents[1:] + contents[:1]):
        remote.write_object(key, content)
    build = b.kiln_build(*using(remote.url))
    assert_every_lookup(build, "compiled", lookups)
    assert_like_without_remote(build, reference)
    assert_one_warning(build, remote.url, "rejected")


@pytest.mark.parametrize("when", ["from the start", "mid-build"])
def test_a_full_server_fails_no_build(server_kind, redis_server, webdav_server, machine,
                                      reference, when):
    if server_kind == "redis":
        server = redis_server()
        used = int(server.info("memory")["used_memory"])
        # Past maxmemory, with noeviction, Redis refuses every write (-OOM).
        server.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
        server.command("CONFIG", "SET", "maxmemory", str(1 if when == "from the start"
                                                         else used + (64 << 10)))
    else:
        # A disk of its own for nginx: writes fail with ENOSPC, nginx answers 500.
        server = webdav_server(disk_size=64 << 10)
        if when == "from the start":
            server.fill_disk()
    build = machine("a").kiln_build(*using(server.url))
    assert_like_without_remote(build, reference)
    assert_one_warning(build, server.url)


def test_objects_too_large_for_the_server_fail_no_build(webdav_server, machine, reference):
    server = webdav_server(max_body_size="4k")  # larger objects get 413
    build = machine("a").kiln_build(*using(server.url))
    assert_like_without_remote(build, reference)
    too_large = [r for r in server.requests() if r[0] == "PUT" and r[2] == 413]
    assert too_large, "no object was larger than the limit: the test proves nothing"
    # Skipping an entry is not the remote misbehaving: a note (-v), no warning.
    assert not build.remote_warnings(), build.stderr
    notes = [line for line in build.stderr.splitlines() if "too large" in line]
    assert len(notes) == len(too_large) and displayed(server.url) in notes[0], (
        f"expected a note per entry the server refused as too large:\n{build.stderr}")
    stored = [r for r in server.requests() if r[0] == "PUT" and r[2] in (200, 201, 204)]
    assert stored, "the entries that fit were not uploaded after one was too large"
