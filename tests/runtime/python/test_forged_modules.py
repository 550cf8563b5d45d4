"""Forged built modules: the runtime and `kiln audit`/`kiln inspect` refuse
the same modules for the same reason, because they run one check.

Each forgery keeps the module's checksums consistent (as someone editing the
file on purpose would), so only the check of what the module says can catch
it. The runtime checks at import what does not grow with the number of
kernels (the bundle, the manifest's outline) and a specialization's own
manifest entry at its kernel's first use: a forgery must end the import in
an ImportError, or, when it lies in one specialization's entry, the first
use of that kernel in a RuntimeError, never another exception or a signal;
audit and inspect must exit 1 and name the same problem."""

import json
import os
import pathlib
import struct
import subprocess
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO_ROOT / "tests" / "driver"))
from kiln_module_format import image_offset, read_bundle, read_manifest, with_manifest  # noqa: E402


@pytest.fixture(scope="module")
def module_file(build_module):
    (found,) = pathlib.Path(build_module(REPO_ROOT / "examples" / "vector_add.py", "vector_add")).glob("*.so")
    return found


def _edited_manifest(data, edit):
    manifest = read_manifest(data)
    edit(manifest)
    return with_manifest(data, json.dumps(manifest, separators=(",", ":")).encode())


def _image_field(offset, value):
    def patch(data):
        at = image_offset(data) + offset
        return data[:at] + struct.pack("<I", value) + data[at + 4:]
    return patch


def _deeply_nested(data):
    _, manifest, _ = read_bundle(data)
    depth = (len(manifest) - 20) // 2
    return with_manifest(data, b'{"format":2,"x":' + b"[" * depth + b"]" * depth + b"}")


FORGERIES = {
    "image of module format 3": (_image_field(4, 3), "was built by an incompatible Kiln: module format 3"),
    "host code of CPU ABI 99": (_image_field(8, 99), "host code of CPU ABI version 99"),
    "one specialization too many in the code": (
        _image_field(12, 5), "its manifest lists 4 specializations but its code has 5"),
    "no parameters": (
        lambda d: _edited_manifest(d, lambda m: m["specializations"][0].update(params=[])),
        "has a parameter layout (0 parameters) that is not the one its argument types take (9 parameters)"),
    "a parameter of the wrong type": (
        lambda d: _edited_manifest(d, lambda m: m["specializations"][0]["params"][0].update(type="i64")),
        "has a parameter layout (9 parameters) that is not the one its argument types take"),
    "arguments that are not a list": (
        lambda d: _edited_manifest(d, lambda m: m["specializations"][1].update(args=7)),
        "has no list of argument types"),
    "a specialization that is a list": (
        lambda d: _edited_manifest(d, lambda m: m["specializations"].__setitem__(0, [1, 2])),
        "the manifest entry of specialization 0 is not an object"),
    "a fat binary before the payload": (
        lambda d: _edited_manifest(d, lambda m: m["specializations"][0]["fatbin"].update(offset=-16)),
        "has a malformed manifest entry"),
    "a manifest nested thousands deep": (_deeply_nested, "nests deeper than 32 levels"),
    "a manifest of another module": (
        lambda d: _edited_manifest(d, lambda m: m.update(module="other")),
        "its manifest describes module 'other'"),
    "a constant without a value": (
        lambda d: _edited_manifest(d, lambda m: m.update(constants=[{"name": "N"}])),
        "its manifest has a malformed constant"),
}


# Forgeries of one specialization's entry, which its kernel's first use finds.
AT_FIRST_USE = {"no parameters", "a parameter of the wrong type", "arguments that are not a list",
                "a fat binary before the payload"}

# Imports the module, then uses each of its kernels.
USE_EVERY_KERNEL = """
import kiln.kernel, vector_add
for name, value in sorted(vars(vector_add).items()):
    if isinstance(value, kiln.kernel.Kernel):
        value.signatures
"""


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_module_is_refused_alike_by_import_audit_and_inspect(
        forgery, module_file, tmp_path, package_dir, kiln):
    forge, problem = FORGERIES[forgery]
    folder = tmp_path / "forged"
    folder.mkdir()
    forged = folder / module_file.name
    forged.write_bytes(forge(module_file.read_bytes()))

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(package_dir)]),
               KILN_TARGET="cpu")
    imported = subprocess.run(
        [sys.executable, "-c", USE_EVERY_KERNEL], capture_output=True, text=True, env=env,
        timeout=120)
    assert imported.returncode == 1, f"the use of {forgery} ended with {imported.returncode}: {imported.stderr}"
    last_line = imported.stderr.strip().splitlines()[-1]
    refusal = ("RuntimeError: kiln: module 'vector_add' is damaged: " if forgery in AT_FIRST_USE
               else "ImportError: kiln: module 'vector_add' ")
    assert last_line.startswith(refusal), (
        f"the use of {forgery} did not end in '{refusal}...': {imported.stderr}")
    assert problem in last_line, f"the use of {forgery} said: {last_line}"

    audited = kiln("audit", folder)
    assert audited.returncode == 1 and problem in audited.stderr, (
        f"kiln audit of {forgery}: exit {audited.returncode}, {audited.stderr}")
    inspected = kiln("inspect", forged)
    assert inspected.returncode == 1 and problem in inspected.stderr, (
        f"kiln inspect of {forgery}: exit {inspected.returncode}, {inspected.stderr}")


def test_a_module_cut_inside_its_section_headers_is_refused_by_inspect_and_import(
        module_file, tmp_path, package_dir, kiln):
    data = module_file.read_bytes()
    folder = tmp_path / "cut"
    folder.mkdir()
    cut = folder / module_file.name
    cut.write_bytes(data[:len(data) - 40])  # the section headers are the file's last bytes
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(package_dir)]),
               KILN_TARGET="cpu")
    imported = subprocess.run([sys.executable, "-c", "import vector_add"], capture_output=True,
                              text=True, env=env, timeout=120)
    assert "ImportError" in imported.stderr and "its section headers end at byte" in imported.stderr
    inspected = kiln("inspect", cut)
    assert inspected.returncode == 1, "kiln inspect passed a file cut inside its section headers"
    assert "its section headers end at byte" in inspected.stderr


def test_a_specialization_without_a_fat_binary_runs_on_the_cpu_and_inspects(
        module_file, tmp_path, package_dir, kiln):
    folder = tmp_path / "cpu_only"
    folder.mkdir()
    cpu_only = folder / module_file.name
    cpu_only.write_bytes(_edited_manifest(
        module_file.read_bytes(), lambda m: m["specializations"][0].pop("fatbin")))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(package_dir)]),
               KILN_TARGET="cpu")
    ran = subprocess.run([sys.executable, "-c", (
        "import numpy as np, vector_add\n"
        "x = np.arange(64, dtype=np.float32); out = np.zeros_like(x)\n"
        "vector_add.add_kernel[2, 32](x, x, out); assert (out == 2 * x).all()")],
        capture_output=True, text=True, env=env, timeout=120)
    assert ran.returncode == 0, ran.stderr
    inspected = kiln("inspect", cpu_only)
    assert inspected.returncode == 0, f"kiln inspect ended with {inspected.returncode}: {inspected.stderr}"
    assert "fatbin  none (the CPU engine only)" in inspected.stdout


def test_a_forged_entry_refuses_its_own_kernel_and_no_other(module_file, tmp_path, package_dir):
    manifest = read_manifest(module_file.read_bytes())
    forged_kernel = manifest["specializations"][1]["name"]
    folder = tmp_path / "forged"
    folder.mkdir()
    (folder / module_file.name).write_bytes(
        _edited_manifest(module_file.read_bytes(), lambda m: m["specializations"][1].update(args=7)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(package_dir)]), KILN_TARGET="cpu")
    script = f"""
import numpy as np, vector_add
x = np.arange(64, dtype=np.float32)
out = np.zeros_like(x)
vector_add.add_kernel[2, 32](x, x, out)
assert (out == 2 * x).all(), "add_kernel computed a wrong result"
try:
    vector_add.{forged_kernel}.signatures
except RuntimeError as error:
    print(error)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, f"a forged entry of {forged_kernel} stopped the module:\n{result.stderr}"
    assert forged_kernel != "add_kernel"
    assert result.stdout.strip() == (
        f"kiln: module 'vector_add' is damaged: the manifest entry of '{forged_kernel}' (specialization 1) "
        "has no list of argument types; rebuild it with kiln build"), result.stdout
