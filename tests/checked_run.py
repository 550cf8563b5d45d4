"""Running a command in a test, with its output in the failure message.

The integration and packaging tests run builds, installers and fresh
interpreters; when one fails, the test fails with the command, its exit
status and the end of what it printed, which is where such tools say why.
"""

import subprocess

import pytest

# Enough of each stream to hold a compiler's or pip's last error, and not
# so much that the failure drowns in build logs.
TAIL_CHARS = 6000


def run_checked(args, cwd=None, env=None, check=True, timeout=600):
    """Runs `args` (str() of each) and returns the CompletedProcess, text
    captured; with `check`, a non-zero exit fails the test."""
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout)
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited with {result.returncode}\n"
                    f"stdout:\n{result.stdout[-TAIL_CHARS:]}\n"
                    f"stderr:\n{result.stderr[-TAIL_CHARS:]}")
    return result
