"""The signatures file: which specializations a package's kernels are called
with, recorded from its test runs for `kiln build` to compile ahead of time.

    KILN_RECORD_SIGNATURES=kiln-signatures.toml python -m pytest
    pytest --kiln-record                      # the same, through the plugin

Every signature a kernel specialized on demand (kiln.cuda.jit) is called
with goes into the file, merged with what is there: one entry per kernel,
by its module-qualified name, sorted and without duplicates, so the file is
the same whichever order the tests ran in. Processes that record at once
(pytest-xdist workers) take turns under a lock and lose nothing:

    # Kernel signatures recorded from test runs; `kiln build` reads them.
    [signatures]
    "pkg.kernels.scale" = [
        "void(float32[::1], float32[::1])",
        "void(float64[::1], float64[::1])",
    ]
"""

import fcntl
import json
import os
import re
import tempfile
import threading

HEADER = "# Kernel signatures recorded from test runs; `kiln build` reads them.\n"
ENVIRONMENT = "KILN_RECORD_SIGNATURES"

_recorded = set()  # (path, kernel, signature) written by this process
_lock = threading.Lock()


class SignatureFileError(ValueError):
    """The signatures file cannot be read."""


def _parse(text, path):
    """The [signatures] table of `text`: {kernel: [signature, ...]}."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the subset this module writes
        return _parse_written_subset(text, path)
    try:
        table = tomllib.loads(text).get("signatures", {})
    except tomllib.TOMLDecodeError as error:
        raise SignatureFileError(f"{path}: {error}") from None
    result = {}
    for kernel, signatures in table.items():
        if isinstance(signatures, str):
            signatures = [signatures]
        if not isinstance(signatures, list) or not all(isinstance(s, str) for s in signatures):
            raise SignatureFileError(f"{path}: the signatures of '{kernel}' must be a string or "
                                     "a list of strings")
        result[kernel] = list(signatures)
    return result


_KEY = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*=\s*\[\s*$')
_ITEM = re.compile(r'^\s*("(?:[^"\\]|\\.)*")\s*,?\s*$')


def _parse_written_subset(text, path):
    result, kernel = {}, None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "[signatures]":
            continue
        if kernel is None:
            match = _KEY.match(line)
            if not match:
                raise SignatureFileError(f"{path}:{number}: expected '\"kernel\" = [', got {stripped!r}")
            kernel = json.loads(f'"{match.group(1)}"')
            result[kernel] = []
        elif stripped == "]":
            kernel = None
        else:
            match = _ITEM.match(line)
            if not match:
                raise SignatureFileError(f"{path}:{number}: expected a quoted signature, got {stripped!r}")
            result[kernel].append(json.loads(match.group(1)))
    return result


def _quote(text):
    """A TOML basic string: JSON's escapes, UTF-8 as it is, DEL escaped (TOML
    allows no raw control characters but tab). pipeline/signature_file.cpp
    writes the same."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _render(table):
    lines = [HEADER, "[signatures]\n"]
    for kernel in sorted(table):
        lines.append(f"{_quote(kernel)} = [\n")
        lines += [f"    {_quote(signature)},\n" for signature in sorted(set(table[kernel]))]
        lines.append("]\n")
    return "".join(lines)


def read(path):
    """{kernel: [signature, ...]} from the file at `path` ({} if there is none)."""
    try:
        with open(path, encoding="utf-8") as file:
            return _parse(file.read(), path)
    except FileNotFoundError:
        return {}


def _locked(path):
    """An open descriptor of the file at `path`, holding its lock. The file
    is replaced rather than rewritten, so a lock taken on a file that has
    since been replaced is dropped and taken again on the new one."""
    while True:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            if os.fstat(descriptor).st_ino == os.stat(path).st_ino:
                return descriptor
        except FileNotFoundError:
            pass
        os.close(descriptor)


def add(path, kernel, signature):
    """Merges one signature of `kernel` (module-qualified) into the file."""
    key = (os.path.abspath(path), kernel, signature)
    with _lock:
        if key in _recorded:
            return
        descriptor = _locked(path)
        try:
            table = read(path)
            if signature not in table.get(kernel, []):
                table.setdefault(kernel, []).append(signature)
                directory = os.path.dirname(os.path.abspath(path))
                handle, temporary = tempfile.mkstemp(prefix=".kiln-signatures-", dir=directory)
                try:
                    with os.fdopen(handle, "w", encoding="utf-8") as file:
                        file.write(_render(table))
                    os.chmod(temporary, 0o644)
                    os.replace(temporary, path)
                except BaseException:
                    os.unlink(temporary)
                    raise
        finally:
            os.close(descriptor)
        _recorded.add(key)


def record(kernel, signature):
    """Adds the signature to the file KILN_RECORD_SIGNATURES names, if any."""
    path = os.environ.get(ENVIRONMENT)
    if path:
        add(path, kernel, signature)
