"""Every code block of README.md and docs/ is run or parsed as the reader
would use it, and what it shows is what happens (documented_examples.py
says how each kind of block is checked)."""

import json
import os
import pathlib
import subprocess
import sys
import tomllib

import pytest

from documented_examples import console_steps, output_matches, read_blocks

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARKER_KINDS = {"file", "run", "before", "excerpt", "skip", "in-tree"}
# Languages whose blocks are parsed: the parser, and the error it raises.
PARSERS = {"toml": (tomllib.loads, tomllib.TOMLDecodeError),
           "json": (json.loads, json.JSONDecodeError)}
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


class Workspace:
    """A document's folder: its blocks run there one after another, as a
    reader following it would run them."""

    def __init__(self, folder, build_dir):
        self.folder = folder / "src"
        self.home = folder / "home"
        self.folder.mkdir()
        self.home.mkdir()
        (self.folder / "examples").symlink_to(ROOT / "examples")
        self.env = dict(os.environ)
        for variable in ("CUDAARCHS", "KILN_REMOTE_CACHE", "KILN_CACHE", "KILN_CACHE_MAX_SIZE",
                         "NO_COLOR", "CLICOLOR_FORCE"):
            self.env.pop(variable, None)
        self.env.update(
            PATH=os.pathsep.join([str(build_dir / "driver"), str(pathlib.Path(sys.executable)
                                                                  .parent), self.env["PATH"]]),
            PYTHONPATH=os.pathsep.join([str(self.folder), str(build_dir / "python")]),
            KILN_SOURCE_TREE=str(ROOT),
            HOME=str(self.home),
            COLUMNS="200")
        for variable in ("KILN_CACHE_DIR", "KILN_CONFIG_DIR", "XDG_CACHE_HOME",
                         "XDG_CONFIG_HOME", "KILN_SIGNING_KEY", "KILN_TRUSTED_KEYS"):
            self.env.pop(variable, None)

    def run(self, command, stdin=None, cwd=None):
        """Runs a shell command, or an argument list."""
        argv = ["bash", "-c", command] if isinstance(command, str) else command
        result = subprocess.run(argv, cwd=cwd or self.folder, env=self.env, text=True, input=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        result.stdout = (result.stdout.replace(str(self.folder), "/src")
                         .replace(str(self.home), "/home/me"))
        return result


def check_block(block, workspace):
    """What is wrong with `block`, run in `workspace`; None if nothing."""
    unknown = {kind for kind, _ in block.markers} - MARKER_KINDS
    if unknown:
        return f"unknown doc-test markers: {', '.join(sorted(unknown))}"
    if block.marker("skip"):
        if not all(block.marker("skip")):
            return "a skip marker needs a reason"
        return None
    for command in block.marker("before"):
        result = workspace.run(command)
        if result.returncode:
            return f"the setup command `{command}` failed:\n{result.stdout}"
    for path in block.marker("excerpt"):
        return check_excerpt(block, ROOT / path)
    for path in block.marker("file"):
        target = workspace.folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text)
        return None
    if block.marker("run"):
        program = workspace.folder / f".block_{block.line}.py"
        program.write_text(block.text)
        result = workspace.run([sys.executable, program.name])
        program.unlink()
        return None if result.returncode == 0 else (
            f"the program exited {result.returncode}:\n{result.stdout}")
    first = block.text.lstrip().splitlines()[0] if block.text.strip() else ""
    if block.language == "python" and first.startswith("# ") and first.endswith(".py"):
        target = workspace.folder / first[2:].strip()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text)
        return None
    if block.language == "python" and first.startswith(">>>"):
        return check_doctest(block, workspace)
    if block.language == "python":
        # Beside the workspace, where no pyproject.toml of the document's applies.
        module = workspace.folder.parent / "modules" / f"block_{block.line}.py"
        module.parent.mkdir(exist_ok=True)
        module.write_text(block.text)
        result = workspace.run(["kiln", "check", str(module)])
        return None if result.returncode == 0 else f"kiln check rejects it:\n{result.stdout}"
    if block.language == "console":
        return check_console(block, workspace)
    if block.language in ("sh", "bash"):
        result = workspace.run("set -e\n" + block.text)
        return None if result.returncode == 0 else (
            f"exited {result.returncode}:\n{result.stdout}")
    if block.language in PARSERS:
        parse, malformed = PARSERS[block.language]
        try:
            parse(block.text)
        except malformed as error:
            return f"is not {block.language.upper()}: {error}"
        return None
    if block.language in ("", "text"):
        if any(line.startswith("$ ") for line in block.text.splitlines()):
            return "shows commands: make it a console block"
        return None
    return (f"a '{block.language or 'plain'}' block needs a marker: "
            "<!-- doc-test: file PATH --> or <!-- doc-test: skip REASON -->")


def check_excerpt(block, source):
    """Whether the block's lines are lines of `source`, in order."""
    if not source.is_file():
        return f"is an excerpt of {source.relative_to(ROOT)}, which does not exist"
    remaining = iter(line.rstrip() for line in source.read_text().splitlines())
    lines = block.text.splitlines()
    if lines and lines[0].startswith("# ") and lines[0].endswith(source.name):
        lines = lines[1:]  # the header that names the file
    for line in lines:
        if line.strip() and not any(line.rstrip() == candidate for candidate in remaining):
            return f"has a line that is not in {source.relative_to(ROOT)} (or not in order): {line}"
    return None


def check_console(block, workspace):
    cwd = ROOT if block.marker("in-tree") else None
    for command, expected in console_steps(block.text):
        result = workspace.run(command, cwd=cwd)
        if not expected:
            if result.returncode:
                return f"`$ {command}` exited {result.returncode}:\n{result.stdout}"
        elif not output_matches(expected, result.stdout):
            return (f"`$ {command}` printed (exit {result.returncode}):\n{result.stdout}\n"
                    "the document shows:\n" + "\n".join(expected))
    return None


DOCTEST_RUNNER = """\
import doctest, sys
text = sys.stdin.read()
test = doctest.DocTestParser().get_doctest(text, {}, "block", None, 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
runner.run(test)
sys.exit(1 if runner.failures else 0)
"""


def check_doctest(block, workspace):
    result = workspace.run([sys.executable, "-c", DOCTEST_RUNNER], stdin=block.text)
    return None if result.returncode == 0 else f"the doctest failed:\n{result.stdout}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_block_does_what_the_document_shows(document, tmp_path, build_dir):
    workspace = Workspace(tmp_path, build_dir)
    problems = []
    for block in read_blocks(document.relative_to(ROOT), document.read_text()):
        problem = check_block(block, workspace)
        if problem:
            problems.append(f"{block.where} ({block.language or 'plain'}): {problem}")
    assert not problems, "\n\n".join(problems)
