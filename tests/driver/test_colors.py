"""Colour on standard error, as clang, cargo and git decide it: --color=
always or never as asked, before or after the subcommand; with auto (the
default), none when $NO_COLOR is set, always when $CLICOLOR_FORCE is, and
otherwise only on a terminal (never in these tests' pipes)."""

import os
import re

import pytest

BAD = """\
from numba import cuda


@cuda.jit("void(float32[::1])")
def k(a):
    a[0] = a + None
"""

ESCAPE = "\x1b["
SEQUENCE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(BAD)
    return path


def environment(**variables):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CLICOLOR_FORCE")}
    env.update(variables)
    return env


@pytest.mark.parametrize("options, variables, coloured", [
    ([], {}, False),
    (["--color=always"], {}, True),
    (["--color", "never"], {"CLICOLOR_FORCE": "1"}, False),
    ([], {"CLICOLOR_FORCE": "1"}, True),
    ([], {"CLICOLOR_FORCE": "0"}, False),
    ([], {"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, False),
    (["--color=always"], {"NO_COLOR": "1"}, True),
])
def test_colour_follows_the_option_then_the_environment(kiln, bad, options, variables, coloured):
    for command in ([*options, "check", bad], ["check", *options, bad]):
        result = kiln(*command, env=environment(**variables))
        assert result.returncode == 1, result.stderr
        assert "error: operator '+'" in SEQUENCE.sub("", result.stderr)
        assert (ESCAPE in result.stderr) == coloured, (
            f"kiln {' '.join(map(str, command))} with {variables}: colour should be "
            f"{'on' if coloured else 'off'}:\n{result.stderr!r}")


def test_an_unknown_colour_choice_is_a_usage_error(kiln, bad):
    result = kiln("--color=sometimes", "check", bad)
    assert result.returncode == 2
    assert result.stderr.startswith("kiln: error: --color: sometimes not in {auto,always,never}")
