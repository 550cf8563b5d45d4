"""A full disk: every write kiln makes fails with `kiln: error: PATH: REASON`,
exit status 1 and no partial output, never a crash.

Two ways to fill the disk. A file size limit (RLIMIT_FSIZE, with SIGXFSZ
ignored so that writes return EFBIG) fails every write of kiln and of the
tools it runs, and needs no privileges. A small tmpfs fails them the way a
full disk does (ENOSPC, and SIGBUS for a write through a memory map); it needs
root, and the tests using it are skipped where mounting is not allowed.
"""

import os
import pathlib
import resource
import signal
import subprocess
import tempfile

import pytest

from test_build_command import SAXPY as KERNELS  # saxpy and fill


@pytest.fixture
def kernels(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    return path


def run_with_file_size_limit(kiln, limit, *args, stdout=subprocess.PIPE):
    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([kiln.binary, *map(str, args)], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, preexec_fn=limit_file_size, timeout=300,
                          env={**os.environ, "KILN_CACHE": "0"})


def assert_clean_failure(result, path_in_message, reason):
    assert result.returncode == 1, (
        f"kiln should fail with status 1 when a write fails, not {result.returncode}:\n"
        f"{result.stderr}")
    assert "LLVM ERROR" not in result.stderr and "Stack dump" not in result.stderr, (
        f"a failed write crashed kiln:\n{result.stderr}")
    assert any(line.startswith("kiln: error: ") and f" {path_in_message}" in line
               and line.endswith(": " + reason) for line in result.stderr.splitlines()), (
        f"an error should name {path_in_message} and say '{reason}':\n{result.stderr}")


@pytest.mark.parametrize("emit", ["ptx", "module"])
def test_a_file_size_limit_fails_the_build_naming_the_file(kiln, kernels, tmp_path, emit):
    out = tmp_path / "out"
    out.mkdir()
    # 1 KiB: room for what ptxas --version prints, not for a kernel's PTX or
    # host object.
    result = run_with_file_size_limit(kiln, 1024, "build", kernels, "--emit", emit, "--module",
                                      "kernels", "--ext-suffix", ".so", "-o", out, "--arch", "80")
    assert_clean_failure(result, str(out) + "/" if emit == "ptx" else "", "File too large")
    assert sorted(p.name for p in out.iterdir()) == [], "a failed build left files behind"


def test_results_that_cannot_reach_standard_output_are_an_error(kiln, kernels):
    with open("/dev/full", "w") as full:
        result = subprocess.run([kiln.binary, "check", str(kernels)], stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=300)
    assert_clean_failure(result, "standard output", "No space left on device")


@pytest.fixture
def full_tmpfs():
    """A 256 KiB tmpfs with 4 KiB left, unmounted afterwards."""
    mount_point = pathlib.Path(tempfile.mkdtemp(prefix="kiln-full-disk-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs",
                              str(mount_point)], capture_output=True)
    if mounted.returncode != 0:
        mount_point.rmdir()
        pytest.skip("cannot mount a tmpfs here (needs root): " + mounted.stderr.decode().strip())
    try:
        filler = mount_point / "filler"
        with open(filler, "wb") as stream:
            try:
                stream.write(b"\0" * (252 * 1024))
            except OSError:
                pass
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)
        mount_point.rmdir()


@pytest.mark.parametrize("emit", ["ptx", "module"])
def test_a_full_disk_fails_the_build_naming_the_file(kiln, kernels, full_tmpfs, emit):
    out = full_tmpfs / "out"
    out.mkdir()
    result = kiln("build", kernels, "--emit", emit, "--module", "kernels", "--ext-suffix", ".so",
                  "-o", out, "--arch", "80;90", env={**os.environ, "KILN_CACHE": "0"})
    assert result.returncode != -signal.SIGBUS, f"LLD's memory-mapped output crashed kiln:\n{result.stderr}"
    assert_clean_failure(result, str(out) + "/", "No space left on device")
    assert sorted(p.name for p in out.iterdir()) == [], "a failed build left files behind"


def test_a_full_temporary_folder_fails_the_build_naming_the_file(kiln, kernels, full_tmpfs,
                                                                   tmp_path):
    out = tmp_path / "out"
    result = kiln("build", kernels, "--emit", "cubin", "-o", out, "--arch", "80",
                  env={**os.environ, "KILN_CACHE": "0", "TMPDIR": str(full_tmpfs)})
    assert_clean_failure(result, str(full_tmpfs), "No space left on device")
    leftovers = sorted(p.name for p in full_tmpfs.iterdir() if p.name != "filler")
    assert leftovers == [], f"kiln left temporary files behind: {leftovers}"
