"""The test rig itself (remote_servers.py): each server does what the tier's
tests rely on it to do, seen through raw sockets and urllib, never Kiln."""

import base64
import http.client
import os
import pathlib
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request

import pytest

from conftest import REPO_ROOT  # tests/conftest.py

from .remote_servers import (ClosedPort, RedisReplyError, RedisServer, WebDavServer,
                             established_connections, redis_command)

KEY = "0123456789abcdef" * 4
OTHER = "fedcba9876543210" * 4
# Bytes a careless client would mangle: CR LF, NUL, high bytes.
DATA = b"kiln\r\n\0\xff" * 100


def request(url, method="GET", data=None, headers=None, timeout=5):
    """(status, body) of one HTTP request."""
    prepared = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(prepared, timeout=timeout) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def alive(pid, program):
    """Whether process `pid` exists and runs `program`."""
    try:
        return program.encode() in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def mounted(path, pid="self"):
    """Whether a file system is mounted on `path` as process `pid` sees it."""
    with open(f"/proc/{pid}/mounts") as mounts:
        return any(line.split()[1] == str(path) for line in mounts)


# Redis.


def test_redis_round_trip_through_raw_access(redis_server):
    server = redis_server()
    assert server.url == f"redis://127.0.0.1:{server.port}"
    server.write_object(KEY, DATA)
    assert server.keys() == [f"kiln:{KEY}"], "objects are not stored under kiln:<key>"
    assert server.objects() == [KEY]
    assert server.read_object(KEY) == DATA, "the bytes came back changed"
    assert redis_command(server.address, "GET", f"kiln:{KEY}") == DATA
    assert server.read_object(OTHER) is None


def test_redis_refuses_a_missing_or_wrong_password(redis_server):
    server = redis_server(password="s3cret")
    with pytest.raises(RedisReplyError, match="NOAUTH"):
        redis_command(server.address, "GET", "kiln:x")
    with pytest.raises(RedisReplyError, match="WRONGPASS"):
        redis_command(server.address, "GET", "kiln:x", password="wrong")
    server.write_object(KEY, DATA)
    assert redis_command(server.address, "GET", f"kiln:{KEY}", password="s3cret") == DATA
    assert server.url_with_password() == f"redis://default:s3cret@127.0.0.1:{server.port}"


def test_redis_serves_a_unix_socket(redis_server):
    server = redis_server(unix_socket=True)
    assert server.url == f"redis+unix://{server.socket_path}"
    assert server.socket_path.is_socket()
    server.write_object(KEY, DATA)
    assert redis_command(str(server.socket_path), "GET", f"kiln:{KEY}") == DATA


def test_a_redis_memory_limit_refuses_writes_as_a_full_server_does(redis_server):
    server = redis_server(maxmemory="1mb")
    with pytest.raises(RedisReplyError, match="OOM"):
        server.write_object(KEY, b"x" * (2 << 20))
    assert server.objects() == [], "a write past the limit was stored"


def test_a_paused_redis_accepts_connections_but_answers_nothing(redis_server):
    server = redis_server()
    server.write_object(KEY, DATA)
    server.pause()
    with pytest.raises(socket.timeout):
        redis_command(server.address, "GET", f"kiln:{KEY}", timeout=0.5)
    # What a client of a paused server sees: its connection is established.
    with socket.create_connection(("127.0.0.1", server.port)):
        assert established_connections(server.port) >= 1
    server.resume()
    server.wait_ready()
    assert server.read_object(KEY) == DATA, "the server did not answer again after resume()"


def test_a_killed_redis_refuses_connections(redis_server):
    server = redis_server()
    pid = server.pid
    server.kill()
    assert not alive(pid, "redis-server"), "SIGKILL left the server running"
    with pytest.raises(ConnectionRefusedError):
        redis_command(server.address, "PING", timeout=1)


# WebDAV.


@pytest.mark.parametrize("layout, path", [("flat", KEY), ("subdirs", f"{KEY[:2]}/{KEY[2:]}"),
                                          ("bazel", f"ac/{KEY}")])
def test_webdav_round_trip_in_each_layout(webdav_server, layout, path):
    server = webdav_server(layout=layout)
    assert server.url == f"http://127.0.0.1:{server.port}/cache"
    status, _ = request(f"{server.url}/{path}", "PUT", DATA)
    assert status in (201, 204), f"PUT answered {status}"
    assert server.files() == [path], f"the object is not where layout={layout} puts it"
    assert server.objects() == [KEY]
    assert server.read_object(KEY) == DATA
    server.write_object(OTHER, b"planted")
    assert request(f"{server.url}/{server.object_path(OTHER)}") == (200, b"planted")
    assert request(f"{server.url}/{server.object_path('ab' * 32)}")[0] == 404


def test_webdav_basic_auth_refuses_wrong_credentials(webdav_server):
    server = webdav_server(basic_auth=("kiln", "s3cret"))
    url = f"{server.url}/{KEY}"
    assert request(url, "PUT", DATA)[0] == 401
    assert request(url, "PUT", DATA, basic("kiln", "wrong"))[0] == 401
    assert request(url, "PUT", DATA, basic("kiln", "s3cret"))[0] in (201, 204)
    assert request(url)[0] == 401, "a GET without credentials was answered"
    assert request(url, headers=server.auth_headers()) == (200, DATA)
    assert server.url_with_password() == f"http://kiln:s3cret@127.0.0.1:{server.port}/cache"


def test_webdav_bearer_token_refuses_any_other_authorization(webdav_server):
    server = webdav_server(bearer_token="t0ken-1")
    url = f"{server.url}/{KEY}"
    for headers in ({}, {"Authorization": "Bearer t0ken-2"}, {"Authorization": "t0ken-1"},
                    basic("kiln", "t0ken-1")):
        assert request(url, "PUT", DATA, headers)[0] == 401, f"accepted {headers}"
    assert request(url, "PUT", DATA, {"Authorization": "Bearer t0ken-1"})[0] in (201, 204)
    assert request(url, headers={"Authorization": "Bearer t0ken-1"}) == (200, DATA)


def test_webdav_refuses_a_body_over_its_limit_as_too_large(webdav_server):
    server = webdav_server(max_body_size="1k")
    assert request(f"{server.url}/{KEY}", "PUT", b"x" * 1024)[0] in (201, 204)
    assert request(f"{server.url}/{OTHER}", "PUT", b"x" * 1025)[0] == 413
    assert server.objects() == [KEY]


def test_webdav_disk_full_makes_writes_fail_with_enospc(webdav_server):
    server = webdav_server(disk_size=256 << 10)
    host_view = server.docroot
    assert mounted(host_view, server.pid), "nginx's root is not its small disk"
    assert not mounted(host_view), "the small disk is mounted outside nginx's mount namespace"
    status, _ = request(f"{server.url}/{KEY}", "PUT", b"x" * (512 << 10))
    assert status >= 500, f"a PUT larger than the disk answered {status}"
    assert "No space left on device" in (server.folder / "error.log").read_text()
    # nginx may answer before it has deleted the failed body's temp file,
    # which holds the disk full a moment longer.
    deadline = time.monotonic() + 30
    while (status := request(f"{server.url}/{KEY}", "PUT", DATA)[0]) not in (201, 204):
        assert time.monotonic() < deadline, f"the disk is full too soon: PUT answered {status}"
        time.sleep(0.05)
    server.fill_disk()
    status, _ = request(f"{server.url}/{OTHER}", "PUT", DATA)
    assert status >= 500, f"a PUT to a full disk answered {status}"
    assert server.objects() == [KEY], "a write to the full disk left a file"
    assert request(f"{server.url}/{KEY}") == (200, DATA), "reads fail on a full disk"


def test_a_paused_webdav_server_answers_nothing(webdav_server):
    server = webdav_server()
    server.write_object(KEY, DATA)
    server.pause()
    with pytest.raises((socket.timeout, urllib.error.URLError)):
        urllib.request.urlopen(f"{server.url}/{KEY}", timeout=0.5)
    server.resume()
    assert request(f"{server.url}/{KEY}") == (200, DATA)


def test_a_closed_port_refuses_connections():
    with ClosedPort() as closed:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", closed.port), timeout=1)


# The slow proxy.


def test_the_slow_proxy_holds_back_each_answer_and_changes_nothing(webdav_server, slow_proxy):
    server = webdav_server()
    server.write_object(KEY, DATA)
    proxy = slow_proxy(server, 0.4)
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    for _ in range(2):  # each request of a kept-alive connection
        began = time.monotonic()
        connection.request("GET", f"/cache/{KEY}")
        answer = connection.getresponse()
        body = answer.read()
        waited = time.monotonic() - began
        assert (answer.status, body) == (200, DATA), "the proxy changed the answer"
        assert waited >= 0.4, f"the answer came after {waited:.3f} s, before the delay"
    connection.close()
    assert proxy.url_for(server.url) == f"http://127.0.0.1:{proxy.port}/cache"


# Clean-up.


def test_stop_ends_every_server_and_removes_its_folder():
    servers = [RedisServer(), RedisServer(unix_socket=True), WebDavServer(),
               WebDavServer(disk_size=1 << 20)]
    for server in servers:
        server.start()
    servers[0].pause()
    servers[3].pause()
    found = [(server.pid, server.folder, server.docroot if isinstance(server, WebDavServer)
              else None) for server in servers]
    for server in servers:
        server.stop()
        server.stop()  # twice is harmless
    for pid, folder, docroot in found:
        assert not alive(pid, "redis-server") and not alive(pid, "nginx"), f"{pid} still runs"
        assert not folder.exists(), f"{folder} was left behind"
        assert docroot is None or not mounted(docroot)


def test_servers_are_stopped_when_the_test_that_started_them_fails(tmp_path):
    record = tmp_path / "started"
    test = tmp_path / "test_fails.py"
    test.write_text(textwrap.dedent(f"""\
        from cache.remote.conftest import servers, redis_server, webdav_server  # noqa: F401


        def test_fails(redis_server, webdav_server):
            redis = redis_server()
            webdav = webdav_server(disk_size=1 << 20)
            webdav.pause()
            with open({str(record)!r}, "w") as out:
                out.write(f"{{redis.pid}} {{webdav.pid}} {{redis.folder}} {{webdav.folder}}")
            assert False, "fails on purpose"
        """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "--rootdir", str(tmp_path), str(test)],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert "1 failed" in result.stdout, result.stdout + result.stderr
    redis_pid, webdav_pid, *folders = record.read_text().split()
    assert not alive(int(redis_pid), "redis-server"), "redis-server outlived the failed test"
    assert not alive(int(webdav_pid), "nginx"), "nginx outlived the failed test"
    for folder in folders:
        assert not pathlib.Path(folder).exists(), f"{folder} outlived the failed test"
