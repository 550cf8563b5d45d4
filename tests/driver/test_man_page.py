"""kiln(1): written by `kiln man-page` (which the build runs) from the
command-line definition the parser uses, so that it names every command and
option this kiln has; groff renders it without a warning."""

import shutil
import subprocess

import pytest


@pytest.fixture
def page(kiln, tmp_path):
    path = tmp_path / "kiln.1"
    result = kiln("man-page", "--output", path)
    assert result.returncode == 0, result.stderr
    return path.read_text()


def test_the_page_describes_every_command_and_the_exit_statuses(kiln, page):
    assert page.startswith(".\\\" kiln(1)")
    assert '\n.TH KILN 1 "" "kiln ' in page
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS",
                    "ENVIRONMENT"):
        assert f"\n.SH {section}\n" in page, section
    for command in ("check files", "build file", "inspect module", "audit path", "targets",
                    "cache prune", "cache key generate", "signatures add", "completion shell"):
        assert f'\n.SS "kiln {command}' in page, command
    assert "\\fB\\-\\-emit\\fR" in page and "\\fB\\-\\-older\\-than\\fR" in page
    assert "Exit status: 0 success; 1 " in page
    assert "man-page" not in kiln("--help").stdout, "the build's command stays out of --help"


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_groff_renders_it_without_warnings(page, tmp_path):
    result = subprocess.run(["groff", "-man", "-Tutf8", "-ww"], input=page, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "kiln build" in result.stdout


def test_the_build_writes_it_beside_the_command(build_dir):
    assert (build_dir / "driver" / "kiln.1").is_file()
