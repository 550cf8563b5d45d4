"""Where Kiln compiles a Python function from: the source file of its
module, or, for a function with no file whose text Python keeps (a notebook
cell, code `exec` ran that registered its text, `python -c`), that text
written to a file for the compiler, with the function's globals as the
module's. The dispatcher and kiln.host_values both need it; it needs
neither."""

import hashlib
import os
import pathlib
import sys
import tempfile
import threading
from typing import NamedTuple


class CompiledFromSource:
    """A kernel or device function Kiln compiles from its Python function
    `py_func`, under the name `built_name` in its module's builds."""


class FunctionSource(NamedTuple):
    path: str
    module_name: str
    # The function's globals where its text was written out (they are the
    # module's); None for a source file of its own.
    written_globals: dict = None


_written = {}  # hash of a text and its globals -> the file it was written to
_written_lock = threading.Lock()


def function_source(py_func):
    """The FunctionSource of `py_func`."""
    filename = py_func.__code__.co_filename
    if os.path.exists(filename):
        return FunctionSource(os.path.abspath(filename), py_func.__module__)
    import linecache  # its tokenize would cost every import of Kiln milliseconds

    source = "".join(linecache.getlines(filename, py_func.__globals__))
    if not source and filename == "<string>" and py_func.__module__ == "__main__":
        source = command_line_program()
    if not source:
        return FunctionSource(os.path.abspath(filename), py_func.__module__)
    # One module per text and globals: the same text may run with others.
    key = hashlib.sha256(f"{source}\0{id(py_func.__globals__)}".encode()).hexdigest()[:16]
    with _written_lock:
        path = _written.get(key)
        if path is None:
            folder = os.path.join(tempfile.gettempdir(), f"kiln-sources-{os.getuid()}")
            path = os.path.join(folder, f"kiln_source_{key}.py")
            os.makedirs(folder, exist_ok=True)
            if not os.path.exists(path) or pathlib.Path(path).read_text() != source:
                scratch = f"{path}.{os.getpid()}.tmp"
                pathlib.Path(scratch).write_text(source)
                os.replace(scratch, path)
            _written[key] = path
    return FunctionSource(path, f"kiln_source_{key}", py_func.__globals__)


def function_file(py_func):
    """The real path of the file Kiln compiles `py_func` from."""
    return os.path.realpath(function_source(py_func).path)


def command_line_program():
    """The program `python -c PROGRAM` runs, or "" if this process is not one."""
    arguments = getattr(sys, "orig_argv", [])
    for i, argument in enumerate(arguments[1:-1], start=1):
        if argument == "-c":
            return arguments[i + 1]
        if not argument.startswith("-") or argument == "-m":
            break
    return ""
