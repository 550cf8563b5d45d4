"""Helpers for the specialization cache's process-level tests.

Every test builds tiny modules for --arch 80 into a cache of its own, with
the real `kiln` command, and inspects the cache with `kiln cache ...`.
"""

import contextlib
import ctypes
import functools
import gzip
import io
import json
import os
import re
import sqlite3
import subprocess
import tarfile

import pytest

from conftest import BUILD_DIR, REPO_ROOT  # noqa: F401  (tests/conftest.py)

MODULE = """\
from numba import cuda, float32, float64, int32, void

SCALE = 3


@cuda.jit(device=True)
def helper(x):
    return x * SCALE


@cuda.jit(void(float32[::1]))
def first(out):
    # a comment
    i = cuda.grid(1)
    if i < out.size:
        out[i] = helper(out[i])


@cuda.jit(void(int32[::1]))
def second(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i + 1
"""

SUMMARY = re.compile(r"^cache .*: (\d+) local hits, (\d+) remote hits, (\d+) compiled$", re.M)
NOTE = re.compile(
    r"^  (local hit|remote hit|compiled) +(\S+) (\S+) (?:kernel '(\w+)'|the image '([\w.]+)')", re.M)

# A build of MODULE keeps five entries: each kernel's LLVM IR, and the PTX,
# cubin and fat binary of the image that holds both kernels.
ENTRIES = 5
# A warm build of it finds three: the image's PTX, which carries what the
# build needs of its kernels' LLVM IR, its cubin and its fat binary.
WARM_HITS = 3


KEY_VARIABLES = ("KILN_CONFIG_DIR", "KILN_TRUSTED_KEYS", "KILN_SIGNING_KEY")

# Blobs of at most this many bytes are rows of objects/packed/blobs.sqlite; the
# others are files (cache/packed_blobs.h).
PACKED_BLOB_LIMIT = 64 * 1024


def packed_database(cache):
    return cache / "objects" / "packed" / "blobs.sqlite"


@contextlib.contextmanager
def packed_blobs(cache):
    """A connection to the cache's packed blobs, committed on leaving."""
    db = sqlite3.connect(packed_database(cache), isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 20000")
        yield db
    finally:
        db.close()


class StoredBlob:
    """A blob the cache keeps, packed (a row of objects/packed/blobs.sqlite) or a
    file, to read, damage or delete as anyone who can write the cache folder
    could."""

    def __init__(self, cache, digest, path=None):
        self.cache = cache
        self.digest = digest
        self.path = path

    def __repr__(self):
        return f"StoredBlob({self.digest[:16]}, {'file' if self.path else 'packed'})"

    def read_bytes(self):
        if self.path:
            return self.path.read_bytes()
        with packed_blobs(self.cache) as db:
            (data,) = db.execute("SELECT bytes FROM packed WHERE digest = ?",
                                 (self.digest,)).fetchone()
        return bytes(data)

    def write_bytes(self, data):
        if self.path:
            os.chmod(self.path, 0o644)
            self.path.write_bytes(data)
            return
        with packed_blobs(self.cache) as db:
            db.execute("UPDATE packed SET bytes = ? WHERE digest = ?", (data, self.digest))

    def unlink(self):
        if self.path:
            self.path.unlink()
            return
        with packed_blobs(self.cache) as db:
            db.execute("DELETE FROM packed WHERE digest = ?", (self.digest,))

    def exists(self):
        if self.path:
            return self.path.exists()
        with packed_blobs(self.cache) as db:
            return db.execute("SELECT 1 FROM packed WHERE digest = ?",
                              (self.digest,)).fetchone() is not None

    @property
    def size(self):
        return len(self.read_bytes())


def kiln_binary():
    return os.environ.get("KILN", str(BUILD_DIR / "driver" / "kiln"))


class CacheRig:
    """A cache folder, an environment pointing at it, and helpers."""

    def __init__(self, root):
        self.root = root
        self.cache = root / "cache"
        self.env = dict(os.environ)
        for name in list(self.env):
            if name.startswith("KILN_CACHE") or name in KEY_VARIABLES:
                del self.env[name]
        self.env["KILN_CACHE_DIR"] = str(self.cache)
        # Keys and trusted keys of the test's own, never the user's.
        self.config = root / "config"
        self.env["KILN_CONFIG_DIR"] = str(self.config)
        self.env.pop("CUDAARCHS", None)
        self.counter = 0

    def write(self, name, text=MODULE):
        path = self.root / name
        path.write_text(text)
        return path

    def command(self, *args):
        return [kiln_binary(), *map(str, args)]

    def run(self, *args, env=None, check=False):
        result = subprocess.run(
            self.command(*args),
            capture_output=True,
            text=True,
            env=env or self.env,
            timeout=300,
        )
        if check:
            assert result.returncode == 0, result.stderr
        return result

    def build_args(self, module, out=None, *extra):
        if out is None:
            self.counter += 1
            out = self.root / f"out{self.counter}"
        arch = [] if "--arch" in map(str, extra) else ["--arch", "80"]
        return ["build", module, "--emit", "fatbin", *arch, "-o", out, "-v", *extra]

    def build(self, module, *extra, out=None, env=None):
        """Builds `module`; returns (result, hits, misses, notes, out): hits
        local or remote, misses compiled, and notes (hit|miss, kind, target,
        kernel, or "image NAME") from -v."""
        if out is None:
            self.counter += 1
            out = self.root / f"out{self.counter}"
        result = self.run(*self.build_args(module, out, *extra), env=env)
        assert result.returncode == 0, result.stderr
        summary = SUMMARY.search(result.stderr)
        hits, misses = ((int(summary[1]) + int(summary[2]), int(summary[3])) if summary
                        else (0, 0))
        notes = [("miss" if m[1] == "compiled" else "hit", m[2], m[3], m[4] or f"image {m[5]}")
                 for m in NOTE.finditer(result.stderr)]
        return result, hits, misses, notes, out

    def stats(self):
        return json.loads(self.run("cache", "stats", "--json", check=True).stdout)

    def entries(self):
        return json.loads(self.run("cache", "list", "--json", check=True).stdout)

    def verify(self, *extra):
        return self.run("cache", "verify", *extra)

    def plant_blob(self, data):
        """Writes `data` into the cache as a blob under its own digest, as
        anyone who can write the cache folder could."""
        digest = blob_digest(data)
        path = self.cache / "objects" / digest[:2] / digest[2:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def blob_files(self):
        objects = self.cache / "objects"
        return [p for p in objects.glob("*/*")
                if len(p.parent.name) == 2 and not p.name.startswith(".")]

    def packed_digests(self):
        if not packed_database(self.cache).exists():
            return []
        with packed_blobs(self.cache) as db:
            return [digest for (digest,) in db.execute("SELECT digest FROM packed")]

    def blobs(self):
        """Every blob the cache keeps, packed or a file."""
        found = [StoredBlob(self.cache, digest) for digest in self.packed_digests()]
        found += [StoredBlob(self.cache, p.parent.name + p.name, p) for p in self.blob_files()]
        return found

    def blob(self, digest):
        """The blob `digest`, packed or a file; nothing if the cache lacks it."""
        return next((b for b in self.blobs() if b.digest == digest), None)

    def make_key(self, name="ci", trust=True):
        """Generates a signing key in the rig's configuration; returns its public line."""
        result = self.run("cache", "key", "generate", "--name", name, check=True)
        line = result.stdout.strip().splitlines()[-1]
        assert line.startswith("kiln-ed25519 ") and line.endswith(" " + name), result.stdout
        if trust:
            self.run("cache", "key", "trust", line, check=True)
        return line


def write_tar(path, members, extra=(), compress=False):
    """members: name → bytes; extra: TarInfo objects (with optional data)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info, data in extra:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    raw = buffer.getvalue()
    path.write_bytes(gzip.compress(raw) if compress else raw)
    return path


def read_tar(path):
    """An archive's regular members, name → bytes."""
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def assert_rejected(rig, archive, reason, outside=None, extra=()):
    """Import refuses `archive` naming it and `reason`, and writes nothing."""
    existed = rig.cache.exists()
    result = rig.run("cache", "import", archive, *extra)
    assert result.returncode == 1, f"import accepted what it should refuse:\n{result.stdout}"
    assert existed or not rig.cache.exists(), "a refused import created the cache folder"
    assert "rejected" in result.stderr and str(archive) in result.stderr, result.stderr
    assert reason in result.stderr, f"expected {reason!r} in:\n{result.stderr}"
    assert rig.stats()["entries"] == 0, "a refused import left entries in the cache"
    assert rig.blobs() == [], "a refused import left blobs in the cache"
    if outside is not None:
        assert not outside.exists()
    return result


@functools.lru_cache(maxsize=None)
def _llvm():
    # LLVM exports BLAKE3 (llvm-c/blake3.h), the hash the cache names blobs
    # by; Python's hashlib has no BLAKE3.
    library = ctypes.CDLL("/usr/lib/llvm-19/lib/libLLVM.so.1")
    library.llvm_blake3_hasher_update.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    return library


def blob_digest(data):
    """The digest the cache names a blob of bytes `data` by (BLAKE3-256, hex)."""
    llvm = _llvm()
    hasher = ctypes.create_string_buffer(4096)  # larger than llvm_blake3_hasher
    llvm.llvm_blake3_hasher_init(hasher)
    llvm.llvm_blake3_hasher_update(hasher, data, len(data))
    out = ctypes.create_string_buffer(32)
    llvm.llvm_blake3_hasher_finalize(hasher, out, 32)
    return out.raw.hex()


def outputs(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix == ".fatbin"}


@pytest.fixture
def exported(rig, tmp_path):
    """Members (name → bytes) of a good export signed by a trusted key 'ci',
    and a fresh cache to import into."""
    module = rig.write("kernels.py")
    rig.build(module)
    rig.make_key("ci")
    archive = tmp_path / "good.tar"
    rig.run("cache", "export", archive, check=True)
    members = read_tar(archive)
    rig.env["KILN_CACHE_DIR"] = str(tmp_path / "target")
    rig.cache = tmp_path / "target"
    return members


@pytest.fixture
def rig(tmp_path):
    binary = kiln_binary()
    if not os.access(binary, os.X_OK):
        pytest.fail(f"kiln is not built at {binary}")
    return CacheRig(tmp_path)


def run_recipe(doc_section, tmp_path, count, what, **environment):
    """Runs every `sh` block of the section of docs/cache.md that starts at
    the heading `doc_section`, each on a machine of its own (its own
    configuration and cache folders, no KILN_ variable of the user's, plus
    `environment`), sharing one work folder that holds kernels.py; returns
    each block's stdout and stderr. The section must have `count` blocks
    (`what` says which, for the message)."""
    text = (REPO_ROOT / "docs" / "cache.md").read_text()
    level = doc_section.split(" ", 1)[0]
    section = text.split(doc_section + "\n", 1)[1].split("\n" + level + " ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == count, f"the recipe is no longer {what}"
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
            **environment,
        )
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=work, env=env,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"block {number + 1} failed:\n{block}\n{result.stderr}"
        outputs.append(result.stdout + result.stderr)
    return outputs
