"""Importing built modules: what the module holds, and damaged modules (a
flipped byte in the manifest or in a fat binary, a truncated file) failing
with an ImportError that says what is damaged, never a crash. Each damaged
import runs in a fresh interpreter."""

import os
import pathlib
import shutil
import struct
import subprocess
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = REPO_ROOT / "examples"
HEADER = struct.Struct("<8sIIQQQQQ")


def _so(folder):
    (found,) = pathlib.Path(folder).glob("*.so")
    return found


def _bundle(data):
    start = data.find(b"KILNBNDL")
    assert start >= 0, "no bundle in the module"
    fields = HEADER.unpack_from(data, start)
    names = ["magic", "format", "header_size", "manifest_offset", "manifest_size", "checksum",
             "payload_offset", "payload_size"]
    return start, dict(zip(names, fields))


def _import_in_subprocess(folder, name, package_dir):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(package_dir)]), KILN_TARGET="cpu")
    return subprocess.run([sys.executable, "-c", f"import {name}; print(sorted(vars({name})))"],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def built(build_module):
    return build_module(EXAMPLES / "vector_add.py", "vector_add")


def test_import_exposes_kernels(import_built):
    module = import_built(EXAMPLES / "vector_add.py", "vector_add")
    assert module.__file__.endswith(".so")
    for name in ("add_kernel", "add_kernel_grid", "vector_add", "increment_kernel"):
        kernel = getattr(module, name)
        assert kernel.signatures and kernel.info()
    assert module.add_kernel.signatures == ["(array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))"]


def test_intact_copy_imports(built, tmp_path, package_dir):
    copy = tmp_path / "intact"
    shutil.copytree(built, copy)
    result = _import_in_subprocess(copy, "vector_add", package_dir)
    assert result.returncode == 0, result.stderr
    assert "add_kernel" in result.stdout


def _damage(built, tmp_path, change):
    folder = tmp_path / "damaged"
    shutil.copytree(built, folder)
    path = _so(folder)
    data = bytearray(path.read_bytes())
    change(data)
    path.write_bytes(bytes(data))
    return folder


def test_flipped_manifest_byte(built, tmp_path, package_dir):
    def change(data):
        start, header = _bundle(data)
        position = start + header["manifest_offset"] + header["manifest_size"] // 2
        data[position] ^= 0x01

    result = _import_in_subprocess(_damage(built, tmp_path, change), "vector_add", package_dir)
    assert result.returncode == 1
    assert "ImportError: kiln: module 'vector_add' is damaged: its manifest fails its checksum; rebuild it with kiln build" in result.stderr


def test_flipped_fatbin_byte(built, tmp_path, package_dir):
    def change(data):
        start, header = _bundle(data)
        position = start + header["payload_offset"] + 100  # inside the first fat binary
        data[position] ^= 0xFF

    result = _import_in_subprocess(_damage(built, tmp_path, change), "vector_add", package_dir)
    assert result.returncode == 1
    assert ("ImportError: kiln: module 'vector_add' is damaged: the fat binary of 'add_kernel' "
            "(specialization 0) fails its checksum; rebuild it with kiln build") in result.stderr


def test_damaged_bundle_header(built, tmp_path, package_dir):
    def change(data):
        start, _ = _bundle(data)
        data[start + 12] ^= 0xFF  # headerSize

    result = _import_in_subprocess(_damage(built, tmp_path, change), "vector_add", package_dir)
    assert result.returncode == 1
    assert "ImportError: kiln: module 'vector_add' is damaged: its bundle header" in result.stderr


def test_truncated_after_its_segments_still_imports(built, tmp_path, package_dir):
    # Cutting only what the loader never maps (section headers, symbol
    # tables) damages nothing the module needs.
    def change(data):
        del data[int(len(data) * 0.999):]

    result = _import_in_subprocess(_damage(built, tmp_path, change), "vector_add", package_dir)
    assert result.returncode == 0, result.stderr


@pytest.mark.xfail(strict=True, reason="glibc's dynamic loader crashes (SIGBUS/SIGSEGV) in dlopen on "
                   "a shared object cut inside its loaded segments, before PyInit_ runs; only a check "
                   "before dlopen (an import hook, or kiln inspect) could turn that into an ImportError")
@pytest.mark.parametrize("keep", [0.3, 0.6, 0.9])
def test_truncated_inside_segments(built, tmp_path, package_dir, keep):
    def change(data):
        del data[int(len(data) * keep):]

    result = _import_in_subprocess(_damage(built, tmp_path, change), "vector_add", package_dir)
    assert result.returncode == 1 and "ImportError" in result.stderr, result


def test_module_image_api(import_built):
    module = import_built(EXAMPLES / "vector_add.py", "vector_add")
    manifest = module.__kiln_manifest__
    assert manifest["module"] == "vector_add" and manifest["format"] == 2
