"""How the docs tests read a document: blocks with their markers, console
commands with their output, and output shown with elisions."""

from documented_examples import console_steps, output_matches, read_blocks

DOCUMENT = """\
Text.

<!-- doc-test: before touch a.py -->
<!-- doc-test: skip no reason needed here -->
```console
$ kiln check a.py      # a comment of the command
a.py
```

````text
```
inner fences stay inside
```
````
"""


def test_blocks_keep_their_line_language_and_markers():
    first, second = read_blocks("doc.md", DOCUMENT)
    assert (first.where, first.language) == ("doc.md:5", "console")
    assert first.markers == [("before", "touch a.py"), ("skip", "no reason needed here")]
    assert first.text == "$ kiln check a.py      # a comment of the command\na.py\n"
    assert second.language == "text" and "inner fences stay inside" in second.text


def test_commands_continue_after_a_backslash_and_output_drops_annotations():
    steps = console_steps("$ lit a \\\n    --param x\nok   # what it means\n\n$ true\n")
    assert steps == [("lit a \\\n    --param x", ["ok"]), ("true", [])]


def test_an_ellipsis_stands_for_text_in_a_line_or_for_lines():
    assert output_matches(["module m", "...", "end"], "module m\na\nb\nend\n")
    assert output_matches(["module m", "...", "end"], "module m\nend\n")
    assert output_matches(["kernels.cpython-3...-linux.so"], "kernels.cpython-311-linux.so\n")
    assert not output_matches(["module m", "end"], "module m\nextra\nend\n"), (
        "a line the document does not show was accepted")
    assert not output_matches(["module m"], "module m\nmore\n"), "trailing output was accepted"
    assert not output_matches(["a...b"], "a\nb\n"), "an ellipsis within a line spanned lines"
