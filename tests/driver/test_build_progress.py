"""`kiln build` progress: ninja-style `[done/total]` lines rewritten in place
when stderr is a terminal, plain lines with -v otherwise, nothing with -q."""

import os
import pty
import re
import subprocess
import sys


# vector_add.py holds 4 kernels; for --arch "75;80" a module build runs, per
# kernel: host code and LLVM IR for sm_75 and sm_80; then, for the image that
# holds all four: PTX for sm_75 and sm_80, two cubins and a fat binary.
TASKS = 4 * 3 + 5


def build_args(repo_root, out, *extra):
    return ["build", repo_root / "examples" / "vector_add.py", "--module", "pkg.vector_add",
            "-o", out, "--arch", "75;80", "--python", sys.executable, "--no-cache", *extra]


def test_without_a_terminal_only_the_result_is_printed(kiln, repo_root, tmp_path):
    result = kiln(*build_args(repo_root, tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.strip().endswith(".so")


def test_verbose_prints_one_line_per_task(kiln, repo_root, tmp_path):
    result = kiln(*build_args(repo_root, tmp_path, "-v"))
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == TASKS
    assert [int(re.match(r"\[(\d+)/", line).group(1)) for line in lines] == \
        list(range(1, TASKS + 1))
    assert all(f"/{TASKS}] " in line for line in lines)
    assert f"[1/{TASKS}] " in lines[0]
    assert any(line.endswith("increment_kernel(int32[::1], int32) llvm sm_80")
               for line in lines)
    assert any(line.endswith("pkg.vector_add (4 kernels) cubin sm_80") for line in lines)
    assert any(line.endswith("pkg.vector_add (4 kernels) fatbin") for line in lines)
    assert any(line.endswith("vector_add(float32[::1], float32[::1], float32[::1]) host")
               for line in lines)


def test_quiet_prints_nothing_but_errors(kiln, repo_root, tmp_path):
    result = kiln(*build_args(repo_root, tmp_path, "-q"))
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "")
    assert list(tmp_path.glob("vector_add*.so"))
    bad = tmp_path / "bad.py"
    bad.write_text("from numba import cuda, float32, void\n\n\n"
                   "@cuda.jit(void(float32[::1]))\ndef k(x):\n    x[0] = x + None\n")
    failed = kiln("build", bad, "--module", "bad", "-o", tmp_path, "--emit", "object", "-q")
    assert failed.returncode == 1
    assert "error: operator '+' is not supported" in failed.stderr


def test_on_a_terminal_one_line_is_rewritten(build_dir, repo_root, tmp_path):
    binary = os.environ.get("KILN", str(build_dir / "driver" / "kiln"))
    master, slave = pty.openpty()
    env = dict(os.environ, TERM="xterm")
    process = subprocess.Popen([binary, *map(str, build_args(repo_root, tmp_path))],
                               stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    output = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        output += chunk
    stdout, _ = process.communicate(timeout=300)
    os.close(master)
    assert process.returncode == 0
    assert stdout.decode().strip().endswith(".so")
    text = output.decode()
    assert "\n" not in text.replace("\r\n", "")
    updates = re.findall(r"\r\[(\d+)/(\d+)\] [^\r]*?\x1b\[K", text)
    assert len(updates) == TASKS
    assert {total for _, total in updates} == {str(TASKS)}
    assert text.endswith("\r\x1b[K"), repr(text[-40:])
