"""Helpers for the specialization cache's process-level tests.

Every test builds tiny modules for --arch 80 into a cache of its own, with
the real `kiln` command, and inspects the cache with `kiln cache ...`.
"""

import ctypes
import functools
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD_DIR  # noqa: F401  (tests/conftest.py)

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

SUMMARY = re.compile(r"^cache .*: (\d+) hits, (\d+) misses$", re.M)
NOTE = re.compile(r"^  (hit |miss) (\S+) (\S+) kernel '(\w+)'", re.M)


def kiln_binary():
    return os.environ.get("KILN", str(BUILD_DIR / "driver" / "kiln"))


class CacheRig:
    """A cache folder, an environment pointing at it, and helpers."""

    def __init__(self, root):
        self.root = root
        self.cache = root / "cache"
        self.env = dict(os.environ)
        for name in list(self.env):
            if name.startswith("KILN_CACHE"):
                del self.env[name]
        self.env["KILN_CACHE_DIR"] = str(self.cache)
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
        """Builds `module`; returns (result, hits, misses, notes, out)."""
        if out is None:
            self.counter += 1
            out = self.root / f"out{self.counter}"
        result = self.run(*self.build_args(module, out, *extra), env=env)
        assert result.returncode == 0, result.stderr
        summary = SUMMARY.search(result.stderr)
        hits, misses = (int(summary[1]), int(summary[2])) if summary else (0, 0)
        notes = [(m[1].strip(), m[2], m[3], m[4]) for m in NOTE.finditer(result.stderr)]
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
        return [p for p in objects.glob("*/*") if not p.name.startswith(".")]


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
def rig(tmp_path):
    binary = kiln_binary()
    if not os.access(binary, os.X_OK):
        pytest.fail(f"kiln is not built at {binary}")
    return CacheRig(tmp_path)
