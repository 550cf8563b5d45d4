"""Forged built modules (forged_modules_attack.py) end in an ImportError, or a
refusal at a kernel's first use, that the driver's check agrees with, or
import and run correctly, never otherwise."""

import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent


@pytest.mark.slow
def test_every_forgery_of_a_manifest_is_refused_or_harmless(kiln):
    result = subprocess.run(
        [sys.executable, str(HERE / "forged_modules_attack.py"), "--kiln", kiln.binary, "--jobs", "2"],
        capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, f"forged modules ended badly:\n{result.stdout[-4000:]}\n{result.stderr[-2000:]}"
    assert "0  ending badly" in result.stdout, result.stdout
