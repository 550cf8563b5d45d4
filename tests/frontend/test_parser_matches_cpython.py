"""Kiln's parser builds the same tree as CPython's.

Both trees are printed in the S-expression form of frontend/parse/ast_printer.h
(CPython's through cpython_ast_dump.py) and compared: on the examples, on
Kiln's prelude modules, and on a sample of the Python standard library that
covers the whole statement and expression grammar.
"""

import pathlib
import re
import subprocess
import sys
import sysconfig

import pytest

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
import cpython_ast_dump  # noqa: E402

# Source files whose trees legitimately differ: non-UTF-8 source encodings
# and identifiers that CPython normalizes with NFKC (PEP 3131).
KNOWN_DIFFERENCES = {
    "encoded_modules", "test_source_encoding.py", "test_unicode_identifiers.py",
    "test_traceback.py", "test_typing.py", "badsyntax_pep3120.py", "bad_coding.py",
    "bad_coding2.py",
}


def dump_with_kiln(build_dir, paths):
    tool = build_dir / "tests" / "frontend" / "kiln_dump_ast"
    output = subprocess.run([str(tool), *map(str, paths)], capture_output=True,
                            text=True, errors="replace", timeout=600).stdout
    parts = re.split(r"^== (.*)$", output, flags=re.M)
    return {parts[i]: parts[i + 1].lstrip("\n") for i in range(1, len(parts), 2)}


def compare(build_dir, paths):
    expected = {}
    for path in paths:
        try:
            expected[str(path)] = cpython_ast_dump.dump(path)
        except (SyntaxError, ValueError, RecursionError, MemoryError, NotImplementedError):
            continue  # not valid Python 3.11, or beyond what the printer renders
    got = dump_with_kiln(build_dir, list(expected))
    mismatches = [p for p in expected if got.get(p) != expected[p]]
    return len(expected), mismatches


def test_examples_and_prelude_parse_like_cpython(repo_root, build_dir):
    paths = sorted((repo_root / "examples").glob("*.py"))
    paths += sorted((repo_root / "frontend" / "prelude").glob("*.py"))
    paths += sorted(p for p in (repo_root / "tests").rglob("*.py") if "invalid" not in p.parts)
    count, mismatches = compare(build_dir, paths)
    assert count == len(paths)
    assert not mismatches, f"trees differ from CPython's for {mismatches}"


def test_standard_library_parses_like_cpython(build_dir):
    stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(p for p in stdlib.rglob("*.py")
                   if "site-packages" not in p.parts
                   and not KNOWN_DIFFERENCES.intersection(p.parts))
    paths = paths[::3]  # a third of the library keeps the test quick
    if len(paths) < 100:
        pytest.skip(f"no standard library sources at {stdlib}")
    count, mismatches = compare(build_dir, paths)
    assert count > 100
    assert not mismatches, f"trees differ from CPython's for {mismatches[:20]}"
