"""Real cache servers on loopback for the remote cache tier's tests and
benchmark, and the means to make them misbehave.

* RedisServer: /usr/bin/redis-server on a free 127.0.0.1 port (or a unix
  socket), nothing persisted; optionally a password, or a memory limit that
  refuses writes ("server full").
* WebDavServer: /usr/sbin/nginx with its DAV module serving a folder;
  optionally basic auth, a bearer token, a request body limit ("too
  large"), or a small disk of its own ("disk full").
* SlowProxy: a TCP proxy that holds back each answer for a while.

Every server runs as a child process in a session of its own and can be
stopped (SIGTERM), killed (SIGKILL), paused (SIGSTOP) and resumed
(SIGCONT); stop() ends the whole session and removes the server's temporary
folder, and whatever a test leaves running is stopped when Python exits.
Objects are read and planted directly (Redis commands, files in nginx's
root), never through Kiln.

Standard library only: bench/remote_cache.py imports this file too.
"""

import atexit
import base64
import os
import pathlib
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

REDIS_SERVER = "/usr/bin/redis-server"
NGINX = "/usr/sbin/nginx"
UNSHARE = "/usr/bin/unshare"

OBJECT_KEY = re.compile(r"^[0-9a-f]{64}$")
REDIS_PREFIX = "kiln:"
LAYOUTS = ("flat", "subdirs", "bazel")

READY_TIMEOUT = 15.0

_running = set()


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on right now (the kernel's
    choice for a socket bound to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ClosedPort:
    """A 127.0.0.1 port that refuses every connection: a socket bound to it
    but never listening keeps any other program from taking it meanwhile."""

    def __init__(self):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]

    def close(self):
        self._socket.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def established_connections(port):
    """How many connections to 127.0.0.1:`port` the kernel has established,
    accepted by the server or still waiting in its accept queue (which a
    paused server never empties)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = pathlib.Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                count += 1
    return count


# A Redis client of a few lines (RESP2), so that the rig needs no Python
# package and sees exactly what the server answers.


class RedisReplyError(Exception):
    """An error reply of the server (-ERR, -NOAUTH, -OOM, ...)."""


def _encode(args):
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, int):
            arg = str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


def _read_reply(stream):
    line = stream.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("the Redis server closed the connection in the middle of a reply")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RedisReplyError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        size = int(rest)
        if size < 0:
            return None
        data = stream.read(size + 2)
        if len(data) != size + 2:
            raise ConnectionError("the Redis server closed the connection in the middle of a reply")
        return data[:-2]
    if kind == b"*":
        size = int(rest)
        return None if size < 0 else [_read_reply(stream) for _ in range(size)]
    raise ConnectionError(f"not a RESP reply: {line[:80]!r}")


def redis_command(address, *args, password=None, timeout=5.0):
    """Sends one command to the Redis server at `address` ((host, port) or a
    unix socket path) on a connection of its own; returns the reply. Raises
    RedisReplyError for an error reply, OSError (socket.timeout included)
    when the server does not answer."""
    family = socket.AF_UNIX if isinstance(address, (str, pathlib.Path)) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        connection.connect(str(address) if family == socket.AF_UNIX else address)
        with connection.makefile("rb") as stream:
            if password is not None:
                connection.sendall(_encode(["AUTH", password]))
                _read_reply(stream)
            connection.sendall(_encode(list(args)))
            return _read_reply(stream)


class ServerProcess:
    """A server running as a child process in a session of its own, with a
    temporary folder that holds its configuration, logs and data."""

    kind = "server"

    def __init__(self):
        self.process = None
        self.folder = None
        self.port = None

    # Subclasses: _command() -> argv; _ready() -> bool; log_text() -> str.

    def start(self):
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix=f"kiln-{self.kind}-"))
        _running.add(self)
        problem = ""
        # A port free a moment ago may be taken before the server binds it:
        # try again with another.
        for _ in range(5):
            self._prepare()
            with open(self.folder / "stdout.log", "ab") as log:
                self.process = subprocess.Popen(
                    self._command(), cwd=self.folder, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True)
            problem = self._await_ready(READY_TIMEOUT)
            if problem is None:
                return self
            if "in use" not in problem:
                break
        self.stop()
        raise RuntimeError(f"the {self.kind} server did not start: {problem}")

    def _prepare(self):
        pass

    def _await_ready(self, timeout):
        """None once the server answers; else why not."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return f"it exited with {self.process.returncode}:\n{self.log_text()[-3000:]}"
            if self._ready():
                return None
            time.sleep(0.02)
        return f"it did not answer within {timeout:g} s:\n{self.log_text()[-3000:]}"

    def wait_ready(self, timeout=READY_TIMEOUT):
        """Returns once the server answers requests (after start() or
        resume()); raises RuntimeError if it does not within `timeout`."""
        problem = self._await_ready(timeout)
        if problem is not None:
            raise RuntimeError(f"the {self.kind} server is not ready: {problem}")

    def log_text(self):
        path = self.folder / "stdout.log" if self.folder else None
        return path.read_text(errors="replace") if path and path.exists() else ""

    @property
    def pid(self):
        return self.process.pid

    def _signal(self, number):
        # Only until the server is reaped: before that, no other process can
        # have been given its id (nor its session's).
        if self.process is None or self.process.returncode is not None:
            return
        try:
            os.killpg(self.process.pid, number)
        except ProcessLookupError:
            pass

    def pause(self):
        """SIGSTOP: the kernel still accepts connections for the server, but
        nothing answers until resume()."""
        self._signal(signal.SIGSTOP)

    def resume(self):
        self._signal(signal.SIGCONT)

    def kill(self):
        """SIGKILL, as a crash or the OOM killer would; the folder stays
        until stop()."""
        self._signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()

    def stop(self):
        """Ends the server (and anything else in its session) and removes its
        folder; safe to call more than once, and after kill()."""
        if self.process is not None and self.process.returncode is None:
            self._signal(signal.SIGTERM)
            self._signal(signal.SIGCONT)  # a paused server handles SIGTERM only when resumed
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        _running.discard(self)

    def __enter__(self):
        return self.start() if self.process is None else self

    def __exit__(self, *exc):
        self.stop()


class RedisServer(ServerProcess):
    """redis-server on 127.0.0.1 (or a unix socket), nothing persisted.

    password: --requirepass; maxmemory: a limit in bytes (or Redis units)
    with the noeviction policy, so that writes past it fail with -OOM, as on
    a full server. Objects are kept under the keys `kiln:<64-hex key>`.
    """

    kind = "redis"

    def __init__(self, password=None, maxmemory=None, unix_socket=False, binary=REDIS_SERVER):
        super().__init__()
        self.password = password
        self.maxmemory = maxmemory
        self.unix_socket = unix_socket
        self.binary = binary
        self.socket_path = None

    def _prepare(self):
        if self.unix_socket:
            self.socket_path = self.folder / "redis.sock"
            self.port = 0
        else:
            self.port = free_port()

    def _command(self):
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                   "--dir", str(self.folder), "--save", "", "--appendonly", "no",
                   "--daemonize", "no", "--logfile", ""]
        if self.socket_path:
            command += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        if self.password is not None:
            command += ["--requirepass", self.password]
        if self.maxmemory is not None:
            command += ["--maxmemory", str(self.maxmemory), "--maxmemory-policy", "noeviction"]
        return command

    def _ready(self):
        try:
            return self.command("PING", timeout=1.0) == "PONG"
        except (OSError, RedisReplyError):
            return False

    @property
    def address(self):
        return self.socket_path if self.socket_path else ("127.0.0.1", self.port)

    @property
    def url(self):
        """The URL without credentials."""
        if self.socket_path:
            return f"redis+unix://{self.socket_path}"
        return f"redis://127.0.0.1:{self.port}"

    def url_with_password(self, password=None, user="default"):
        """The URL with `user:password@` (the server's password by default)."""
        password = self.password if password is None else password
        return f"redis://{user}:{password}@127.0.0.1:{self.port}"

    def command(self, *args, timeout=5.0):
        """One command, authenticated with the server's password."""
        return redis_command(self.address, *args, password=self.password, timeout=timeout)

    def info(self, section):
        """`INFO section` as a dict of strings."""
        text = self.command("INFO", section).decode()
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def reads(self):
        """How many key lookups the server has answered (hits and misses)."""
        stats = self.info("stats")
        return int(stats["keyspace_hits"]) + int(stats["keyspace_misses"])

    def keys(self, pattern="*"):
        return sorted(key.decode() for key in self.command("KEYS", pattern))

    def get(self, key):
        return self.command("GET", key)

    def set(self, key, data):
        self.command("SET", key, data)

    def objects(self):
        """The 64-hex keys of the objects stored under `kiln:<key>`."""
        return [key[len(REDIS_PREFIX):] for key in self.keys(REDIS_PREFIX + "*")]

    def read_object(self, key):
        return self.get(REDIS_PREFIX + key)

    def write_object(self, key, data):
        self.set(REDIS_PREFIX + key, data)


NGINX_CONFIG = """\
daemon off;
master_process off;
# Whoever runs the tests; as root, nginx would hand its temporary folders
# to "nobody", whom a user namespace does not map.
user root;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log info;
events {{ worker_connections 256; }}
http {{
    log_format kiln '$request_method $uri $status $request_length';
    access_log {folder}/access.log kiln;
    client_body_temp_path {body_temp};
    proxy_temp_path {folder}/proxy-temp;
    fastcgi_temp_path {folder}/fastcgi-temp;
    uwsgi_temp_path {folder}/uwsgi-temp;
    scgi_temp_path {folder}/scgi-temp;
    server {{
        listen 127.0.0.1:{port};
        root {docroot};
        client_max_body_size {max_body_size};
        location {base}/ {{
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
{auth}        }}
    }}
}}
"""


class WebDavServer(ServerProcess):
    """nginx's WebDAV module serving `<url>` from a folder (store_root).

    basic_auth: (user, password), checked against a `{PLAIN}` password file;
    bearer_token: requests whose Authorization is not `Bearer <token>` get
    401; max_body_size: nginx's client_max_body_size ("64m"; larger PUTs get
    413); disk_size: bytes of a tmpfs mounted on nginx's root in a mount
    namespace of nginx's own (`unshare --mount`), where request bodies are
    written too, so that a write past it fails with ENOSPC (fill_disk()
    fills it at once). layout: where the object of a key lives under the
    root, as the tier's `layout=` attribute says.
    """

    kind = "webdav"

    def __init__(self, basic_auth=None, bearer_token=None, max_body_size="64m", disk_size=None,
                 layout="flat", base_path="/cache", binary=NGINX):
        super().__init__()
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
        if bearer_token is not None and not re.fullmatch(r"[A-Za-z0-9._~+-]+", bearer_token):
            raise ValueError("a bearer token of letters, digits and ._~+- only")
        if basic_auth is not None and not all(re.fullmatch(r"[^:\s]+", s) for s in basic_auth):
            raise ValueError("a basic-auth user and password without ':' or spaces")
        self.basic_auth = basic_auth
        self.bearer_token = bearer_token
        self.max_body_size = max_body_size
        self.disk_size = disk_size
        self.layout = layout
        self.base_path = base_path.rstrip("/")
        self.binary = binary

    @property
    def docroot(self):
        return self.folder / "www"

    def _prepare(self):
        self.port = free_port()
        self.docroot.mkdir(exist_ok=True)
        auth = ""
        if self.basic_auth is not None:
            user, password = self.basic_auth
            (self.folder / "htpasswd").write_text(f"{user}:{{PLAIN}}{password}\n")
            auth += '            auth_basic "kiln cache";\n'
            auth += f"            auth_basic_user_file {self.folder}/htpasswd;\n"
        if self.bearer_token is not None:
            auth += (f'            if ($http_authorization != "Bearer {self.bearer_token}") '
                     "{ return 401; }\n")
        (self.folder / "nginx.conf").write_text(NGINX_CONFIG.format(
            folder=self.folder, body_temp=self.docroot / ".body-temp", docroot=self.docroot,
            port=self.port, max_body_size=self.max_body_size, base=self.base_path, auth=auth))
        if self.disk_size is None:
            (self.docroot / ".body-temp").mkdir(exist_ok=True)
            (self.docroot / self.base_path.lstrip("/")).mkdir(parents=True, exist_ok=True)

    def _command(self):
        nginx = [self.binary, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"),
                 "-e", str(self.folder / "error.log")]
        if self.disk_size is None:
            return nginx
        # The tmpfs exists only in nginx's private mount namespace: it goes
        # away with nginx, and the tests reach it through /proc/PID/root.
        script = (f"mount -t tmpfs -o size={int(self.disk_size)},mode=0755 kiln-webdav-disk "
                  f"{shlex.quote(str(self.docroot))} && "
                  f"mkdir -p {shlex.quote(str(self.docroot / '.body-temp'))} "
                  f"{shlex.quote(str(self.docroot / self.base_path.lstrip('/')))} && "
                  f"exec {shlex.join(nginx)}")
        # Root may mount; anyone else, as root of a user namespace of their own.
        as_user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        return [UNSHARE, *as_user, "--mount", "--propagation", "private", "sh", "-c", script]

    def _ready(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
                return True
        except OSError:
            return False

    def log_text(self):
        parts = [super().log_text()]
        error_log = self.folder / "error.log" if self.folder else None
        if error_log and error_log.exists():
            parts.append(error_log.read_text(errors="replace"))
        return "".join(parts)

    @property
    def url(self):
        """The URL without credentials."""
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    def url_with_password(self, password=None, user=None):
        """The URL with `user:password@` (the basic-auth pair by default)."""
        default_user, default_password = self.basic_auth or ("kiln", "")
        user = default_user if user is None else user
        password = default_password if password is None else password
        return f"http://{user}:{password}@127.0.0.1:{self.port}{self.base_path}"

    def auth_headers(self):
        """The headers that authorize a request to this server."""
        if self.bearer_token is not None:
            return {"Authorization": f"Bearer {self.bearer_token}"}
        if self.basic_auth is not None:
            pair = base64.b64encode(":".join(self.basic_auth).encode()).decode()
            return {"Authorization": f"Basic {pair}"}
        return {}

    @property
    def store_root(self):
        """The folder the base URL serves, as this process sees it (through
        nginx's mount namespace when it has a disk of its own)."""
        inside = self.docroot / self.base_path.lstrip("/")
        if self.disk_size is None:
            return inside
        return pathlib.Path(f"/proc/{self.pid}/root") / inside.relative_to("/")

    def files(self):
        """Paths (relative to store_root, '/'-separated) of the files stored."""
        root = self.store_root
        if not root.is_dir():
            return []
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    def read(self, relative):
        return (self.store_root / relative).read_bytes()

    def write(self, relative, data):
        path = self.store_root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def object_path(self, key):
        if self.layout == "subdirs":
            return f"{key[:2]}/{key[2:]}"
        if self.layout == "bazel":
            return f"ac/{key}"
        return key

    def objects(self):
        """The keys of the objects stored in this server's layout."""
        found = []
        for relative in self.files():
            key = relative.replace("/", "") if self.layout == "subdirs" else relative.split("/")[-1]
            if OBJECT_KEY.match(key) and self.object_path(key) == relative:
                found.append(key)
        return found

    def read_object(self, key):
        return self.read(self.object_path(key))

    def write_object(self, key, data):
        self.write(self.object_path(key), data)

    def fill_disk(self):
        """Fills the server's disk to the last byte: every later write fails."""
        if self.disk_size is None:
            raise RuntimeError("this server has no disk of its own: pass disk_size")
        filler = self.store_root.parent / ".filler"
        with open(filler, "ab", buffering=0) as out:
            chunk = b"\0" * 4096
            try:
                while True:
                    out.write(chunk)
            except OSError as error:
                if error.errno != 28:  # ENOSPC
                    raise
        # The last page may still take a few bytes.
        with open(filler, "ab", buffering=0) as out:
            try:
                while True:
                    out.write(b"\0")
            except OSError as error:
                if error.errno != 28:
                    raise

    def requests(self):
        """(method, uri, status) of every request answered so far, from the
        access log."""
        log = self.folder / "access.log"
        if not log.exists():
            return []
        found = []
        for line in log.read_text(errors="replace").splitlines():
            fields = line.split()
            if len(fields) >= 3:
                found.append((fields[0], fields[1], int(fields[2])))
        return found


class SlowProxy:
    """A TCP proxy on 127.0.0.1 in front of `upstream` ((host, port)) that
    holds back each answer until `delay` seconds after the request it
    answers: a server far away or overloaded. One thread per direction of
    each connection; stop() closes everything."""

    def __init__(self, upstream, delay):
        self.upstream = upstream
        self.delay = delay
        self.port = None
        self._listener = None
        self._threads = []
        self._sockets = set()
        self._lock = threading.Lock()
        self._stopping = False
        self._delayed_since = []

    def start(self):
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        # accept() wakes up now and then to see whether stop() was called.
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        _running.add(self)
        self._spawn(self._accept)
        return self

    def url_for(self, url):
        """`url` with its 127.0.0.1:PORT replaced by the proxy's."""
        return re.sub(r"127\.0\.0\.1:\d+", f"127.0.0.1:{self.port}", url, count=1)

    def _spawn(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def _accept(self):
        while not self._stopping:
            try:
                client, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            client.settimeout(None)
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.update((client, server))
            pending = {"since": None}
            self._spawn(self._requests, client, server, pending)
            self._spawn(self._answers, server, client, pending)

    def _requests(self, client, server, pending):
        try:
            while data := client.recv(65536):
                with self._lock:
                    if pending["since"] is None:
                        pending["since"] = time.monotonic()
                server.sendall(data)
        except OSError:
            pass
        self._close(client, server)

    def _answers(self, server, client, pending):
        try:
            while data := server.recv(65536):
                with self._lock:
                    since, pending["since"] = pending["since"], None
                if since is not None:
                    with self._lock:
                        self._delayed_since.append(since)
                    time.sleep(max(0.0, since + self.delay - time.monotonic()))
                client.sendall(data)
        except OSError:
            pass
        self._close(client, server)

    def serial_waits(self):
        """How many times in a row a client waited for held-back answers:
        answers to requests sent while an earlier one was held back count
        with it, as a client asking in parallel waits for them together."""
        with self._lock:
            started = sorted(self._delayed_since)
        waits, wave_end = 0, None
        for since in started:
            if wave_end is None or since >= wave_end:
                waits, wave_end = waits + 1, since + self.delay
        return waits

    def _close(self, *sockets):
        for each in sockets:
            try:
                each.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            each.close()
            with self._lock:
                self._sockets.discard(each)

    def stop(self):
        self._stopping = True
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            sockets = list(self._sockets)
        self._close(*sockets)
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=5)
        _running.discard(self)

    def __enter__(self):
        return self.start() if self.port is None else self

    def __exit__(self, *exc):
        self.stop()


@atexit.register
def _stop_leftovers():
    """Servers a caller forgot (or could not) stop do not outlive Python."""
    for server in list(_running):
        server.stop()
