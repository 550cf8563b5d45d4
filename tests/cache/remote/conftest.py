"""Fixtures of the remote cache tier's tests: real servers on loopback and
"machines" that share them.

A machine is a CacheRig (tests/cache/conftest.py) of its own: a cache folder
(KILN_CACHE_DIR), a configuration folder (KILN_CONFIG_DIR) with its signing
key and the keys it trusts, and no KILN_REMOTE_CACHE from the user. Every
machine builds the same file, a copy of examples/vector_add.py (four kernels)
made once per session, for Kiln's default architecture list, as a Python
extension module (`kiln build --emit module -v`); `-v` prints a line per
lookup, `  remote hit ...`, `  local hit ...` or `  compiled ...`.

Every server a test starts is stopped at the test's teardown, whether the
test passed or not.
"""

import re
import shutil
import subprocess
import time

import pytest

from conftest import REPO_ROOT  # tests/conftest.py

from ..conftest import CacheRig, kiln_binary
from .remote_servers import RedisServer, SlowProxy, WebDavServer

STATUS = re.compile(r"^  (remote hit|local hit|compiled) (.*)$", re.M)
STATUSES = ("remote hit", "local hit", "compiled")
BUILD_TIMEOUT = 300
# A build facing a server that takes connections but never answers must
# still finish; this bound is generous on purpose (a correctness bound, not
# a speed figure).
STALL_BOUND = 60
MODULE_SOURCE = REPO_ROOT / "examples" / "vector_add.py"


def displayed(url):
    """`url` as messages must show it: without its attributes, any password
    replaced by `***`."""
    base = url.split("|", 1)[0]
    return re.sub(r"^([a-z+]+://[^:/@]*):[^@/]*@", r"\1:***@", base)


class Build:
    """A finished `kiln build`: its output, the status of every lookup and
    the extension modules it wrote."""

    def __init__(self, command, returncode, stdout, stderr, out, seconds):
        self.command = command
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.out = out
        self.seconds = seconds
        self.statuses = [(m[1], m[2]) for m in STATUS.finditer(stderr)]
        self.outputs = {p.name: p.read_bytes() for p in sorted(out.glob("*.so"))}

    def count(self, status):
        assert status in STATUSES, status
        return sum(1 for found, _ in self.statuses if found == status)

    def summary(self):
        return ", ".join(f"{self.count(s)} {s}" for s in STATUSES)

    def remote_warnings(self):
        """The warning lines about remote caches."""
        return [line for line in self.stderr.splitlines()
                if "warning" in line and "remote cache" in line]


class RunningBuild:
    """A `kiln build` process still running, for tests that act on a server
    in the middle of a build."""

    def __init__(self, command, env, out):
        self.command = command
        self.out = out
        self.started = time.monotonic()
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env)

    def running(self):
        return self.process.poll() is None

    def act_when(self, condition, action, poll=0.005):
        """Calls `action` as soon as `condition()` holds, if that happens
        before the build ends; returns whether it did."""
        while self.running():
            if condition():
                action()
                return True
            time.sleep(poll)
        return False

    def finish(self, timeout=BUILD_TIMEOUT):
        """Waits for the build (at most `timeout` seconds: past it, the build
        is killed and the test fails); the build must have succeeded."""
        try:
            stdout, stderr = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            stdout, stderr = self.process.communicate()
            pytest.fail(f"kiln build did not finish within {timeout} s: {' '.join(self.command)}\n"
                        f"{stderr[-3000:]}")
        build = Build(self.command, self.process.returncode, stdout, stderr, self.out,
                      time.monotonic() - self.started)
        assert build.returncode == 0, (
            f"kiln build failed (exit {build.returncode}): {' '.join(self.command)}\n{stderr}")
        return build


class Machine(CacheRig):
    """A developer's or CI machine: a cache and a configuration of its own."""

    def __init__(self, root, name, module):
        root.mkdir(parents=True, exist_ok=True)
        super().__init__(root)
        self.name = name
        self.module = module
        self.env.pop("KILN_REMOTE_CACHE", None)
        self.public_key = None

    def generate_key(self):
        """A signing key of the machine's name (which it trusts itself)."""
        self.public_key = self.make_key(self.name, trust=True)
        return self.public_key

    def trust(self, *machines):
        for machine in machines:
            self.run("cache", "key", "trust", machine.public_key, check=True)

    def start_build(self, *args, module=None, env=None, jobs=2, verbose=True):
        """Starts `kiln build MODULE --emit module -v -j JOBS ARGS...` into
        a new output folder."""
        self.counter += 1
        out = self.root / f"out{self.counter}"
        command = self.command("build", module or self.module, "--emit", "module", "-o", out,
                               *(["-v"] if verbose else []), "-j", jobs, *args)
        return RunningBuild(command, env or self.env, out)

    def kiln_build(self, *args, timeout=BUILD_TIMEOUT, **options):
        return self.start_build(*args, **options).finish(timeout)

    def stats_text(self):
        return self.run("cache", "stats", check=True).stdout


def assert_every_lookup(build, status, lookups):
    """Every lookup of `build` has `status`, and there are `lookups` of them."""
    assert lookups > 0, "the build without a remote printed no lookup lines: does -v report them?"
    assert build.count(status) == lookups and len(build.statuses) == lookups, (
        f"expected {lookups} lookups, all '{status}'; got {build.summary()}:\n{build.stderr}")


def assert_like_without_remote(build, reference):
    """The build wrote exactly what a build without any remote writes."""
    assert build.outputs, f"the build wrote no extension module:\n{build.stderr}"
    assert build.outputs == reference.outputs, (
        "the build's extension module differs from the one a build without the remote writes")


def assert_one_warning(build, url, *words, secrets=()):
    """One warning line about remote caches, naming `url` as displayed (no
    password) and `words`; no secret anywhere in the output."""
    warnings = build.remote_warnings()
    assert len(warnings) == 1, (
        f"expected one warning line about the remote cache, got {len(warnings)}:\n{build.stderr}")
    assert displayed(url) in warnings[0], (
        f"the warning does not name the remote as {displayed(url)!r}: {warnings[0]}")
    for word in words:
        assert word in warnings[0], f"the warning does not say {word!r}: {warnings[0]}"
    for secret in secrets:
        assert secret not in build.stderr and secret not in build.stdout, (
            f"the output shows the secret {secret!r}:\n{build.stderr}")
    return warnings[0]


def assert_no_remote_warning(build):
    assert not build.remote_warnings(), f"unexpected warning:\n{build.stderr}"


@pytest.fixture(scope="session")
def kernels(tmp_path_factory):
    """The module every machine builds (one path, so every machine's keys
    and outputs are comparable)."""
    folder = tmp_path_factory.mktemp("remote-source")
    path = folder / MODULE_SOURCE.name
    shutil.copyfile(MODULE_SOURCE, path)
    return path


@pytest.fixture(scope="session")
def reference(kernels, tmp_path_factory):
    """The module built with an empty cache and no remote."""
    binary = kiln_binary()
    if not shutil.which(binary):
        pytest.fail(f"kiln is not built at {binary}")
    machine = Machine(tmp_path_factory.mktemp("reference"), "reference", kernels)
    build = machine.kiln_build()
    assert build.outputs, f"the reference build wrote no extension module:\n{build.stderr}"
    build.machine = machine
    return build


@pytest.fixture
def lookups(reference):
    """How many lookups a build of the module makes with an empty cache."""
    return reference.count("compiled")


@pytest.fixture(scope="session")
def warm_lookups(reference):
    """How many lookups a build of the module makes when every entry is
    there: fewer, since an image's PTX, found first, stands for its kernels'
    LLVM IR."""
    warm = reference.machine.kiln_build()
    assert warm.statuses and warm.count("local hit") == len(warm.statuses), warm.summary()
    return len(warm.statuses)


@pytest.fixture
def machine(tmp_path, kernels):
    """machine(name, key=True) -> a Machine under tmp_path/name, with a
    signing key of its own unless key=False."""

    def make(name, key=True):
        made = Machine(tmp_path / name, name, kernels)
        if key:
            made.generate_key()
        return made

    return make


@pytest.fixture
def servers():
    """start(server) -> the server, started; every one is stopped at
    teardown, even when the test fails."""
    started = []

    def start(server):
        started.append(server)
        return server.start()

    yield start
    for server in reversed(started):
        server.stop()


@pytest.fixture
def redis_server(servers):
    """redis_server(**options) -> a started RedisServer."""
    return lambda **options: servers(RedisServer(**options))


@pytest.fixture
def webdav_server(servers):
    """webdav_server(**options) -> a started WebDavServer."""
    return lambda **options: servers(WebDavServer(**options))


@pytest.fixture
def slow_proxy(servers):
    """slow_proxy(server, delay) -> a started SlowProxy in front of `server`."""
    return lambda server, delay: servers(SlowProxy(("127.0.0.1", server.port), delay))


SERVER_KINDS = {"redis": RedisServer, "webdav": WebDavServer}


@pytest.fixture(params=sorted(SERVER_KINDS))
def server_kind(request):
    """Each kind of server, in turn."""
    return request.param


@pytest.fixture
def remote(server_kind, servers):
    """An empty server of each kind, in turn."""
    return servers(SERVER_KINDS[server_kind]())
