"""`kiln audit`: Kiln modules found in folders, wheels and conda packages
(.tar.bz2, and .conda when the zstd command is there), their kernels and
architectures, --require-arch, modules of an incompatible Kiln, and damaged
modules and archives (clear errors, never a crash)."""

import io
import json
import shutil
import struct
import subprocess
import tarfile
import zipfile

import pytest

from kiln_module_format import read_bundle, with_manifest

MODULE_SUFFIX = ".abi3.so"  # what kiln build names a module by default
MODULE_PATH = f"pkg/vector_add{MODULE_SUFFIX}"
SITE = "lib/python3.11/site-packages/"


@pytest.fixture(scope="module")
def module_bytes(kiln, repo_root, tmp_path_factory):
    """examples/vector_add.py built as pkg.vector_add for sm_75 and sm_80."""
    out = tmp_path_factory.mktemp("audit-module")
    result = kiln("build", repo_root / "examples" / "vector_add.py", "--module",
                  "pkg.vector_add", "-o", out, "--arch", "75;80")
    assert result.returncode == 0, result.stderr
    return (out / f"vector_add{MODULE_SUFFIX}").read_bytes()


@pytest.fixture(scope="module")
def other_extension(build_dir):
    """An extension module that is not a Kiln module (the runtime's own,
    which even holds the bundle magic among its strings)."""
    found = sorted((build_dir / "python" / "kiln").glob("_runtime*.so"))
    assert found, "kiln._runtime is not built"
    return found[0].read_bytes()


def make_wheel(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
    return path


def tar_bytes(members, mode="w"):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def audit(kiln, *args):
    result = kiln("audit", *args)
    assert result.returncode >= 0, f"kiln audit crashed (signal {-result.returncode})"
    return result


def audit_json(kiln, *args):
    result = audit(kiln, "--json", *args)
    return result, json.loads(result.stdout)


def test_a_folder_lists_modules_kernels_and_archs(kiln, module_bytes, other_extension, tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / MODULE_PATH).write_bytes(module_bytes)
    (tmp_path / "pkg" / "_other.so").write_bytes(other_extension)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    result = audit(kiln, tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"folder {tmp_path}: 1 Kiln module"
    assert lines[1] == MODULE_PATH
    assert lines[2] == ("  module   pkg.vector_add, built by Kiln 0.1.0 "
                        "(bundle format 2, manifest format 2)")
    assert lines[3] == "  archs    cubins sm_75 sm_80; PTX compute_75 compute_80"
    assert "  kernel increment_kernel" in lines
    assert "    (array(int32, 1d, C), int32)" in lines
    assert "      cubins sm_75 sm_80; PTX compute_75 compute_80" in lines


def test_a_wheel_in_json(kiln, module_bytes, other_extension, tmp_path):
    wheel = make_wheel(tmp_path / "pkg-1.0-cp311-cp311-linux_x86_64.whl", {
        "pkg/__init__.py": b"", MODULE_PATH: module_bytes, "pkg/_other.so": other_extension,
        "pkg-1.0.dist-info/METADATA": b"Name: pkg\n"})
    result, report = audit_json(kiln, wheel, "--require-arch", "80")
    assert result.returncode == 0, result.stderr
    assert report["kind"] == "wheel" and report["ok"] is True
    assert report["required_archs"] == {"cubins": [80], "ptx": [80]}
    assert report["problems"] == []
    [module] = report["modules"]
    assert module["path"] == MODULE_PATH and module["status"] == "ok"
    assert module["module"] == "pkg.vector_add" and module["kiln_version"] == "0.1.0"
    assert module["bundle_format"] == 2 and module["manifest_format"] == 2
    assert module["archs"] == {"cubins": [75, 80], "ptx": [75, 80]}
    assert module["missing"] == []
    names = [kernel["name"] for kernel in module["kernels"]]
    assert names == ["add_kernel", "add_kernel_grid", "vector_add", "increment_kernel"]
    spec = module["kernels"][3]["specializations"][0]
    assert spec == {"args": ["array(int32, 1d, C)", "int32"], "cubins": [75, 80],
                    "ptx": [75, 80]}


def test_a_missing_arch_fails_naming_it(kiln, module_bytes, tmp_path):
    wheel = make_wheel(tmp_path / "pkg.whl", {MODULE_PATH: module_bytes})
    result = audit(kiln, wheel, "--require-arch", "7.5 9.0+PTX")
    assert result.returncode == 1
    assert (f"kiln: error: module 'pkg.vector_add' ({MODULE_PATH}) has no sm_90 cubin "
            "(in any of its 4 specializations)") in result.stderr
    assert "has no compute_90 PTX" in result.stderr
    assert "sm_75" not in result.stderr
    _, report = audit_json(kiln, wheel, "--require-arch", "90-real")
    assert report["ok"] is False
    assert report["modules"][0]["missing"][0]["arch"] == "sm_90"
    assert len(report["modules"][0]["missing"][0]["specializations"]) == 4

    ok = audit(kiln, wheel, "--require-arch", "sm_75;80-real;compute_80")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[-1] == ("every specialization has the required architectures: "
                                          "sm_75 sm_80 cubins, compute_80 PTX")


def test_a_bad_arch_list_is_a_usage_error(kiln, module_bytes, tmp_path):
    (tmp_path / "m.so").write_bytes(module_bytes)
    result = audit(kiln, tmp_path, "--require-arch", "sm_12")
    assert result.returncode == 2
    assert "--require-arch" in result.stderr


def test_no_modules_is_fine_unless_archs_are_required(kiln, tmp_path):
    (tmp_path / "x.py").write_text("")
    result = audit(kiln, tmp_path)
    assert result.returncode == 0 and "0 Kiln modules" in result.stdout
    result = audit(kiln, tmp_path, "--require-arch", "80")
    assert result.returncode == 1
    assert "no Kiln modules in" in result.stderr


def test_a_tar_bz2_conda_package(kiln, module_bytes, tmp_path):
    package = tmp_path / "pkg-1.0-py311_0.tar.bz2"
    package.write_bytes(tar_bytes({"info/index.json": b"{}", SITE + MODULE_PATH: module_bytes},
                                  "w:bz2"))
    result, report = audit_json(kiln, package, "--require-arch", "75")
    assert result.returncode == 0, result.stderr
    assert report["kind"] == "conda package"
    assert [m["path"] for m in report["modules"]] == [SITE + MODULE_PATH]


def zstd_compress(data):
    try:
        import zstandard
        return zstandard.ZstdCompressor().compress(data)
    except ImportError:
        pass
    if not shutil.which("zstd"):
        pytest.skip("neither the zstandard module nor the zstd command is available")
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True,
                          check=True).stdout


def test_a_dot_conda_package(kiln, module_bytes, tmp_path):
    """A .conda: a zip holding metadata.json and two .tar.zst archives."""
    inner = zstd_compress(tar_bytes({SITE + MODULE_PATH: module_bytes}))
    info = zstd_compress(tar_bytes({"info/index.json": b"{}"}))
    package = make_wheel(tmp_path / "pkg-1.0-py311_0.conda", {
        "metadata.json": b'{"conda_pkg_format_version": 2}',
        "pkg-pkg-1.0-py311_0.tar.zst": inner, "info-pkg-1.0-py311_0.tar.zst": info})
    result, report = audit_json(kiln, package)
    assert result.returncode == 0, result.stderr
    assert report["kind"] == "conda package"
    [module] = report["modules"]
    assert module["path"] == "pkg-pkg-1.0-py311_0.tar.zst!" + SITE + MODULE_PATH
    assert module["module"] == "pkg.vector_add"


def patched(data, offset, value):
    return data[:offset] + value + data[offset + len(value):]


def test_a_module_of_another_bundle_format_is_incompatible(kiln, module_bytes, tmp_path):
    header, _, _ = read_bundle(module_bytes)
    newer = patched(module_bytes, header["file_offset"] + 8, struct.pack("<I", 3))
    (tmp_path / "new.so").write_bytes(newer)
    result, report = audit_json(kiln, tmp_path)
    assert result.returncode == 1
    [module] = report["modules"]
    assert module["status"] == "incompatible" and module["bundle_format"] == 3
    assert "built by an incompatible Kiln: bundle format 3, this Kiln" in module["problem"]
    assert "'new.so' was built by an incompatible Kiln: bundle format 3" in result.stderr


def test_a_module_of_another_manifest_format_is_incompatible(kiln, module_bytes, tmp_path):
    header, manifest, _ = read_bundle(module_bytes)
    assert manifest.startswith(b'{\n  "format": 2,')
    changed = manifest.replace(b'"format": 2,', b'"format": 7,', 1)
    (tmp_path / "old.so").write_bytes(with_manifest(module_bytes, changed))
    result = audit(kiln, tmp_path)
    assert result.returncode == 1
    assert ("'old.so' (module pkg.vector_add) was built by an incompatible Kiln (0.1.0): "
            "manifest format 7, this Kiln reads format 2") in result.stderr


def test_damaged_modules_are_named(kiln, module_bytes, tmp_path):
    header, _, _ = read_bundle(module_bytes)
    at = header["file_offset"]
    payload = at + header["payload_offset"]
    flipped = patched(module_bytes, payload + 100, bytes([module_bytes[payload + 100] ^ 0xFF]))
    (tmp_path / "flipped.so").write_bytes(flipped)
    (tmp_path / "truncated.so").write_bytes(module_bytes[:payload + 64])
    (tmp_path / "manifest.so").write_bytes(
        patched(module_bytes, at + header["manifest_offset"] + 20, b"#"))
    result, report = audit_json(kiln, tmp_path)
    assert result.returncode == 1
    status = {m["path"]: (m["status"], m["problem"]) for m in report["modules"]}
    assert status["flipped.so"][0] == "damaged"
    assert "the fat binary of 'add_kernel' (specialization 0) fails its checksum: it is" in (
        status["flipped.so"][1])
    assert status["truncated.so"][0] == "damaged"
    assert "truncated" in status["truncated.so"][1]
    assert status["manifest.so"] == ("damaged", status["manifest.so"][1])
    assert "its manifest fails its checksum" in status["manifest.so"][1]
    assert "'flipped.so' (module pkg.vector_add) is damaged: the fat binary" in result.stderr


@pytest.mark.parametrize("damage", ["truncated", "garbage", "flipped", "empty"])
def test_damaged_wheels_give_clear_errors(kiln, module_bytes, tmp_path, damage):
    good = make_wheel(tmp_path / "good.whl", {"pkg/__init__.py": b"", MODULE_PATH: module_bytes})
    data = good.read_bytes()
    if damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "garbage":
        data = b"this is not a zip file at all" * 10
    elif damage == "flipped":
        # A byte inside the module's compressed data: a bad CRC or stream.
        at = data.find(b"vector_add") + 2000
        data = patched(data, at, bytes([data[at] ^ 0x55]))
    else:
        data = b""
    bad = tmp_path / f"{damage}.whl"
    bad.write_bytes(data)
    result = audit(kiln, bad)
    assert result.returncode == 1, (result.stdout, result.stderr)
    if damage in ("garbage", "empty"):
        assert (f"kiln: error: '{bad}' is neither a Kiln module, a folder, nor an archive "
                "Kiln reads") in result.stderr
    else:
        assert f"kiln: error: '{bad}' is damaged: its member '{MODULE_PATH}' cannot be read (" \
            in result.stderr


def test_a_truncated_conda_package(kiln, module_bytes, tmp_path):
    data = tar_bytes({SITE + MODULE_PATH: module_bytes}, "w:bz2")
    bad = tmp_path / "pkg-1.0-0.tar.bz2"
    bad.write_bytes(data[:len(data) * 2 // 3])
    result = audit(kiln, bad)
    assert result.returncode == 1
    assert f"kiln: error: '{bad}' is damaged" in result.stderr


def test_a_file_that_is_neither(kiln, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    result = audit(kiln, text)
    assert result.returncode == 1
    assert "is neither a Kiln module, a folder, nor an archive Kiln reads" in result.stderr


def test_a_wheel_whose_source_changed_after_the_build_fails_naming_it(kiln, repo_root, module_bytes,
                                                                    tmp_path):
    source = (repo_root / "examples" / "vector_add.py").read_bytes()
    as_built = make_wheel(tmp_path / "same.whl", {MODULE_PATH: module_bytes, "pkg/vector_add.py": source})
    result, report = audit_json(kiln, as_built)
    assert result.returncode == 0, result.stderr
    assert report["modules"][0]["stale_sources"] == []

    edited = make_wheel(tmp_path / "edited.whl",
                        {MODULE_PATH: module_bytes, "pkg/vector_add.py": source + b"# edited\n"})
    result = audit(kiln, edited)
    assert result.returncode == 1, "a module that does not match its source must fail the audit"
    assert "  source   vector_add.py changed after the module was built from it" in result.stdout
    assert (f"'{MODULE_PATH}' (module pkg.vector_add) does not match its source: vector_add.py "
            "changed after the module was built from it") in result.stderr
    result, report = audit_json(kiln, edited)
    assert report["modules"][0]["stale_sources"] == ["vector_add.py changed after the module was built from it"]

    without = make_wheel(tmp_path / "without.whl", {MODULE_PATH: module_bytes})
    assert audit(kiln, without).returncode == 0, "a module need not ship its source"
