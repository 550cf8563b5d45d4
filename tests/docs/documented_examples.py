"""Reads the fenced code blocks of a Markdown document and says how each is
checked (docs/testing.md, "Documented examples").

A block is checked by its language:

- ``console``: each ``$ COMMAND`` line runs in bash, in the document's
  workspace; the lines after it, up to the next ``$``, are its output
  (standard output and error together); a command ending in ``\\``
  continues on the next line. ``...`` stands for any text within
  a line, and a line of ``...`` alone for any number of lines; two spaces
  and ``# `` start an annotation, which is not output. A command shown
  without output must exit 0. The workspace is shown as ``/src``, and a
  home folder of its own as ``/home/me``.
- ``python`` starting with ``>>>``: a doctest, run in the workspace.
- ``python`` whose first line is ``# NAME.py``: a file of the workspace.
- other ``python``: a kernel module, which ``kiln check`` must accept.
- ``toml`` and ``json``: parsed.
- ``sh`` and ``bash``: run as a script, which must exit 0.
- no language, or ``text``: a diagram or an excerpt, not run; a command
  line (``$ ...``) in one is an error, since commands go in ``console``.

A marker in an HTML comment on the line before the opening fence changes
that:

- ``<!-- doc-test: file PATH -->`` writes the block to PATH in the
  workspace;
- ``<!-- doc-test: run -->`` runs a ``python`` block as a program in the
  workspace, which must exit 0;
- ``<!-- doc-test: in-tree -->`` runs a ``console`` block in Kiln's source
  tree instead (the commands of a developer's guide);
- ``<!-- doc-test: before COMMAND -->`` runs COMMAND first (an edit the
  text describes, a file it assumes); it finds Kiln's tree at
  ``$KILN_SOURCE_TREE``;
- ``<!-- doc-test: excerpt PATH -->`` checks that the block's lines are
  lines of PATH in Kiln's tree, in order (a file that a slow test builds,
  such as a conda recipe);
- ``<!-- doc-test: skip REASON -->`` leaves the block out, for a reason
  the reader can check.

A block of any other language needs a marker.
"""

import dataclasses
import re

MARKER = re.compile(r"<!--\s*doc-test:\s*([\w-]+)\s*(.*?)\s*-->")
FENCE = re.compile(r"^(```+)\s*([\w+-]*)\s*$")
ANNOTATION = re.compile(r"\s{2,}# .*$")


@dataclasses.dataclass
class Block:
    path: str
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    markers: list  # [(kind, argument)]

    @property
    def where(self):
        return f"{self.path}:{self.line}"

    def marker(self, kind):
        return [argument for found, argument in self.markers if found == kind]


def read_blocks(path, text):
    blocks = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        markers = []
        above = index - 1
        while above >= 0 and MARKER.search(lines[above]):
            markers = MARKER.findall(lines[above]) + markers
            above -= 1
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence.group(1):
            end += 1
        blocks.append(Block(str(path), index + 1, fence.group(2) or "", 
                            "\n".join(lines[index + 1:end]) + "\n", markers))
        index = end + 1
    return blocks


def console_steps(text):
    """[(command, expected output lines)] of a console block."""
    steps = []
    continued = False
    for line in text.splitlines():
        if continued:
            steps[-1][0] += "\n" + line
            continued = line.endswith("\\")
        elif line.startswith("$ "):
            steps.append([line[2:], []])
            continued = line.endswith("\\")
        elif steps:
            steps[-1][1].append(ANNOTATION.sub("", line).rstrip())
        elif line.strip():
            raise ValueError(f"output before the first command: {line!r}")
    for step in steps:
        while step[1] and not step[1][-1]:
            step[1].pop()
    return [(command, expected) for command, expected in steps]


def output_pattern(expected):
    """A regular expression for output shown as `expected` lines."""
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        pieces = [re.escape(piece) for piece in line.split("...")]
        parts.append(r"[^\n]*?".join(pieces) + r"[ \t]*\n")
    return re.compile("".join(parts) + r"\s*\Z")


def output_matches(expected, actual):
    actual = "\n".join(line.rstrip() for line in actual.splitlines()) + "\n"
    return output_pattern(expected).match(actual) is not None
