"""`kiln inspect`: what a built module holds, read without importing it, and
damaged modules named as such."""

import json

import pytest

from kiln_module_format import checksum_text, read_bundle


@pytest.fixture(scope="module")
def module(kiln, repo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("inspect")
    result = kiln("build", repo_root / "examples" / "vector_add.py", "--module", "pkg.vector_add",
                  "-o", out, "--arch", "80", "--ext-suffix", ".so")
    assert result.returncode == 0, result.stderr
    return out / "vector_add.so"


def test_text_lists_kernels_archs_and_sizes(kiln, module):
    result = kiln("inspect", module)
    assert result.returncode == 0, result.stderr
    manifest = json.loads(read_bundle(module.read_bytes())[1])
    lines = result.stdout.splitlines()
    assert lines[0] == "module pkg.vector_add"
    assert "  built by    Kiln 0.1.0 (manifest format 2, bundle format 2)" in lines
    assert f"  source      vector_add.py (checksum {manifest['source']['checksum']})" in lines
    assert "  archs       cubins sm_80; PTX compute_80" in lines
    assert "kernel add_kernel" in lines and "kernel increment_kernel" in lines
    assert "  (array(int32, 1d, C), int32)" in lines
    for spec in manifest["specializations"]:
        fatbin = spec["fatbin"]
        assert (f"    fatbin  {fatbin['size']} bytes at payload offset {fatbin['offset']} "
                f"(checksum {fatbin['checksum']})") in lines
        assert f"    entry   {spec['entry']} (with block entry)" in lines
    assert lines.count("    host    index checks: checked") == len(manifest["specializations"])


SHARED_KERNEL = """\
from numba import cuda, float32


@cuda.jit("void(float32[::1])")
def reverse_block(a):
    tile = cuda.shared.array(256, float32)
    i = cuda.threadIdx.x
    tile[i] = a[i]
    cuda.syncthreads()
    a[i] = tile[255 - i]
"""


def test_registers_spills_and_shared_memory_per_arch_are_what_the_build_reported(kiln,
                                                                                tmp_path):
    (tmp_path / "shared.py").write_text(SHARED_KERNEL)
    built = kiln("build", tmp_path / "shared.py", "--module", "shared", "-o", tmp_path,
                 "--arch", "75;90", "--ext-suffix", ".so", "--no-cache", "-v")
    assert built.returncode == 0, built.stderr
    reported = {line.split(":")[0].strip(): line.split(":")[1].strip()
                for line in built.stdout.splitlines() if line.startswith("    sm_")}
    assert set(reported) == {"sm_75", "sm_90"}, built.stdout

    text = kiln("inspect", tmp_path / "shared.so")
    assert text.returncode == 0, text.stderr
    for arch, usage in reported.items():
        # build -v: "N registers, S bytes stack, ... , 1024 bytes shared"
        assert f"    {arch}   {usage}, 0 bytes local" in text.stdout.splitlines(), (
            f"kiln inspect does not show what the build reported for {arch}: {usage}\n"
            + text.stdout)
    resources = json.loads(kiln("inspect", tmp_path / "shared.so", "--json").stdout)[
        "kernels"][0]["specializations"][0]["resources"]
    assert sorted(resources) == ["sm_75", "sm_90"]
    for arch, usage in resources.items():
        assert usage["shared"] == 1024 and usage["registers"] > 0, (arch, usage)
        assert reported[arch].startswith(f"{usage['registers']} registers, "), (arch, usage)


def test_json_matches_the_manifest(kiln, module):
    result = kiln("inspect", module, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    header, manifest_bytes, payload = read_bundle(module.read_bytes())
    manifest = json.loads(manifest_bytes)
    assert list(report) == ["file", "module", "kiln_version", "manifest_format", "bundle",
                            "source", "options", "archs", "constants", "kernels"]
    assert report["module"] == "pkg.vector_add" and report["kiln_version"] == "0.1.0"
    assert report["bundle"]["file_offset"] == header["file_offset"]
    assert report["bundle"]["manifest_checksum"] == checksum_text(manifest_bytes)
    assert report["bundle"]["payload_size"] == len(payload)
    for key in ("source", "options", "archs", "constants"):
        assert report[key] == manifest[key]
    assert [k["name"] for k in report["kernels"]] == [
        "add_kernel", "add_kernel_grid", "vector_add", "increment_kernel"]
    specs = [s for k in report["kernels"] for s in k["specializations"]]
    for spec, expected in zip(specs, manifest["specializations"], strict=True):
        assert spec["args"] == expected["args"] and spec["entry"] == expected["entry"]
        assert spec["fatbin"] == expected["fatbin"]
        assert spec["cubins"] == [80] and spec["ptx"] == [80]
        assert spec["static_shared_bytes"] == 0 and spec["local_bytes"] == 0
        assert spec["index_checks"] == expected["index_checks"] == "checked"
    assert all(k["kind"] == "kernel" for k in report["kernels"])


def test_output_is_stable(kiln, module):
    assert kiln("inspect", module, "--json").stdout == kiln("inspect", module, "--json").stdout


def damaged_copy(module, tmp_path, change):
    data = bytearray(module.read_bytes())
    change(data)
    path = tmp_path / "damaged.so"
    path.write_bytes(bytes(data))
    return path


def test_a_truncated_module_is_refused(kiln, module, tmp_path):
    header = read_bundle(module.read_bytes())[0]
    end = header["file_offset"] + header["payload_offset"] + header["payload_size"] // 2
    path = damaged_copy(module, tmp_path, lambda data: data.__delitem__(slice(end, None)))
    result = kiln("inspect", path)
    assert result.returncode == 1
    assert "the file is truncated: its section headers end at byte" in result.stderr
    assert str(path) in result.stderr


def test_a_damaged_manifest_is_refused(kiln, module, tmp_path):
    header = read_bundle(module.read_bytes())[0]
    at = header["file_offset"] + header["manifest_offset"] + 20

    def flip(data):
        data[at] ^= 0x01
    result = kiln("inspect", damaged_copy(module, tmp_path, flip))
    assert result.returncode == 1
    assert "its manifest fails its checksum" in result.stderr


def test_a_damaged_fatbin_names_the_first_kernel_that_loads_it(kiln, module, tmp_path):
    header, manifest_bytes, _ = read_bundle(module.read_bytes())
    specializations = json.loads(manifest_bytes)["specializations"]
    # The module's kernels share one image: its fat binary is theirs.
    assert {s["fatbin"]["offset"] for s in specializations} == {0}, specializations
    at = header["file_offset"] + header["payload_offset"] + 100

    def flip(data):
        data[at] ^= 0xFF
    result = kiln("inspect", "--json", damaged_copy(module, tmp_path, flip))
    assert result.returncode == 1 and result.stdout == ""
    assert "the fat binary of 'add_kernel' (specialization 0) fails its checksum" in result.stderr


def test_a_damaged_header_is_refused(kiln, module, tmp_path):
    header = read_bundle(module.read_bytes())[0]

    def bad_size(data):
        data[header["file_offset"] + 12] = 99  # headerSize
    result = kiln("inspect", damaged_copy(module, tmp_path, bad_size))
    assert result.returncode == 1
    assert "header" in result.stderr


def test_a_file_without_a_bundle_is_refused(kiln, tmp_path):
    path = tmp_path / "plain.so"
    path.write_bytes(b"\x7fELF" + bytes(100))
    result = kiln("inspect", path)
    assert result.returncode == 1
    assert "no Kiln bundle" in result.stderr
