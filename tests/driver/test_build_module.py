"""`kiln build --module`: the Python extension module, its bundle, manifest
format 2, reproducibility, and PyInit_ handing the image to kiln._runtime."""

import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys

import pytest

from kiln_module_format import (
    BUNDLE_SECTION, CPU_ABI_VERSION, MANIFEST_FORMAT, MODULE_FORMAT_VERSION, PT_LOAD, SHF_ALLOC, SHT_PROGBITS,
    checksum_text, elf_sections, elf_segments, loaded_end, read_bundle)

# What kiln build names a module by default: one for every CPython.
STABLE_ABI_SUFFIX = ".abi3.so"

CONSTANTS = """\
import math
import numpy as np
from numba import cuda, float32, void

TPB = 16
SCALE = 0.5
HALF = np.float32(0.5)
NAME = "kiln"
ENABLED = True
NOTHING = None
ROOT = 1 + 2j
SHAPE = (4, 8)
MIXED = (1, 2.5, "x")
BIG = 2 ** 70
INF = math.inf


@cuda.jit(void(float32[::1]))
def scale(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * SCALE
"""


@pytest.fixture(scope="module")
def built(kiln, repo_root, tmp_path_factory):
    """examples/vector_add.py built as pkg.vector_add for sm_80."""
    out = tmp_path_factory.mktemp("module") / "pkg"
    result = kiln("build", repo_root / "examples" / "vector_add.py", "--module", "pkg.vector_add",
                  "-o", out, "--arch", "80")
    assert result.returncode == 0, result.stderr
    return out / ("vector_add" + STABLE_ABI_SUFFIX), result


def test_the_module_is_named_for_the_stable_abi(built):
    path, result = built
    assert [p.name for p in path.parent.iterdir()] == [path.name], "temporary files left behind"
    assert result.stdout.strip() == str(path)
    assert path.read_bytes()[:4] == b"\x7fELF"


def test_the_module_has_a_shared_librarys_permissions(built):
    path, _ = built
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o777 & ~umask, (
        "the module should be executable, as a linker writes a shared library")


def test_the_bundle_holds_the_manifest_and_every_fatbin(built):
    data = built[0].read_bytes()
    header, manifest_bytes, payload = read_bundle(data)
    assert header["format"] == MODULE_FORMAT_VERSION
    assert header["header_size"] == 56 and header["manifest_offset"] == 56
    assert header["file_offset"] % 16 == 0 and header["payload_offset"] % 16 == 0
    assert header["manifest_checksum"] == int(checksum_text(manifest_bytes), 16)
    manifest = json.loads(manifest_bytes)
    assert list(manifest)[:8] == ["format", "module", "kiln_version", "source", "options",
                                  "archs", "constants", "specializations"]
    assert manifest["format"] == MANIFEST_FORMAT
    assert manifest["module"] == "pkg.vector_add"
    assert manifest["source"]["file"] == "vector_add.py"
    assert manifest["options"] == {"fastmath": False, "debug": False, "lineinfo": False,
                                   "opt": None, "max_registers": None, "ptxas_flags": []}
    assert manifest["archs"] == {"cubins": [80], "ptx": [80]}
    names = [s["name"] for s in manifest["specializations"]]
    assert names == ["add_kernel", "add_kernel_grid", "vector_add", "increment_kernel"]
    for spec in manifest["specializations"]:
        fatbin = spec["fatbin"]
        assert fatbin["offset"] % 16 == 0
        blob = payload[fatbin["offset"]:fatbin["offset"] + fatbin["size"]]
        assert blob[:4] == bytes.fromhex("50ed55ba")
        assert checksum_text(blob) == fatbin["checksum"]
        assert spec["files"] == [] and spec["cubins"] == [80] and spec["ptx"] == [80]
        assert list(spec)[4:6] == ["args", "arg_names"]
        assert len(spec["arg_names"]) == len(spec["args"])
    assert [s["arg_names"] for s in manifest["specializations"]] == [
        ["x", "y", "out"], ["x", "y", "out"], ["r", "x", "y"], ["g_data", "inc_value"]]


def test_the_bundle_is_a_section_the_loader_never_maps(built):
    data = built[0].read_bytes()
    header, _, _ = read_bundle(data)
    sections = elf_sections(data)
    section = sections[BUNDLE_SECTION]
    assert section["type"] == SHT_PROGBITS and section["flags"] == 0
    assert section["addralign"] == 16 and section["offset"] % 16 == 0
    # The bundle found by its magic is the section, to its last byte.
    assert section["offset"] == header["file_offset"]
    assert section["size"] == header["payload_offset"] + header["payload_size"]
    # After every loaded segment: a file cut there still loads, and the
    # runtime finds the cut.
    assert section["offset"] >= loaded_end(data)
    for segment in elf_segments(data):
        if segment["type"] == PT_LOAD:
            end = segment["offset"] + segment["filesz"]
            assert not (segment["offset"] < section["offset"] + section["size"]
                        and section["offset"] < end)
    # Nothing else holds a copy of it.
    assert data.count(b"KILNBNDL") == 1
    assert not any(s["flags"] & SHF_ALLOC and s["size"] >= section["size"] // 2
                   for s in sections.values())


def test_readelf_agrees_that_the_bundle_is_not_loaded(built):
    readelf = shutil.which("llvm-readelf-19") or shutil.which("readelf")
    if not readelf:
        pytest.skip("no readelf")
    listing = subprocess.run([readelf, "-lSW", built[0]], capture_output=True, text=True,
                             check=True).stdout
    (line,) = [line for line in listing.splitlines() if BUNDLE_SECTION in line and "]" in line]
    fields = line.split("]", 1)[1].split()
    assert fields[:2] == [BUNDLE_SECTION, "PROGBITS"]
    offset = int(fields[3], 16)
    loads = [line.split() for line in listing.splitlines() if line.strip().startswith("LOAD")]
    assert loads and all(int(f[1], 16) + int(f[4], 16) <= offset for f in loads)
    # No segment maps the section (the section-to-segment mapping: it is
    # listed under "None" alone).
    mapping = listing.split("Section to Segment mapping")[1].splitlines()
    assert [line.split()[0] for line in mapping if BUNDLE_SECTION in line] == ["None"]


def test_the_source_checksum_is_of_the_source_bytes(built, repo_root):
    manifest = json.loads(read_bundle(built[0].read_bytes())[1])
    source = (repo_root / "examples" / "vector_add.py").read_bytes()
    assert manifest["source"]["checksum"] == checksum_text(source)


def test_only_pyinit_is_exported(built):
    nm = shutil.which("llvm-nm-19") or shutil.which("nm")
    if not nm:
        pytest.skip("no nm")
    listing = subprocess.run([nm, "-D", "--defined-only", built[0]], capture_output=True,
                             text=True, check=True).stdout
    assert [line.split()[-1] for line in listing.splitlines()] == ["PyInit_vector_add"]
    undefined = subprocess.run([nm, "-D", "--undefined-only", built[0]], capture_output=True,
                               text=True, check=True).stdout
    for name in ("PyImport_ImportModule", "PyObject_GetAttrString", "PyCapsule_GetPointer",
                 "Py_DecRef"):
        assert name in undefined


def test_builds_are_byte_identical(kiln, repo_root, built, tmp_path):
    result = kiln("build", repo_root / "examples" / "vector_add.py", "--module", "pkg.vector_add",
                  "-o", tmp_path, "--arch", "80", "--python-abi", "abi3", "-j", "1")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / built[0].name).read_bytes() == built[0].read_bytes()


def test_emit_module_is_the_same_as_the_default(kiln, tmp_path):
    source = tmp_path / "small.py"
    source.write_text(CONSTANTS)
    for folder, extra in (("a", []), ("b", ["--emit", "module"])):
        result = kiln("build", source, "--module", "small", "-o", tmp_path / folder, "--arch", "80",
                      "--ext-suffix", ".so", *extra)
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "a" / "small.so").read_bytes() == (tmp_path / "b" / "small.so").read_bytes()


def test_constants_are_the_modules_python_values(kiln, tmp_path):
    source = tmp_path / "consts.py"
    source.write_text(CONSTANTS)
    result = kiln("build", source, "--module", "consts", "-o", tmp_path, "--arch", "80",
                  "--ext-suffix", ".so", "--fastmath", "--opt", "0", "-Xptxas", "-O2")
    assert result.returncode == 0, result.stderr
    manifest = json.loads(read_bundle((tmp_path / "consts.so").read_bytes())[1])
    constants = {c["name"]: (c["type"], c["value"]) for c in manifest["constants"]}
    assert [c["name"] for c in manifest["constants"]] == sorted(constants)
    assert constants == {
        "ENABLED": ("bool", True),
        "HALF": ("float32", 0.5),
        "INF": ("float64", "inf"),
        "MIXED": ("Tuple(int64, float64, unicode_type)", [1, 2.5, "x"]),
        "NAME": ("unicode_type", "kiln"),
        "NOTHING": ("none", None),
        "ROOT": ("complex128", [1.0, 2.0]),
        "SCALE": ("float64", 0.5),
        "SHAPE": ("UniTuple(int64 x 2)", [4, 8]),
        "TPB": ("int64", 16),
    }
    assert manifest["options"] == {"fastmath": True, "debug": False, "lineinfo": False,
                                   "opt": 0, "max_registers": None, "ptxas_flags": ["-O2"]}


def test_other_emit_forms_write_a_format_2_manifest_without_fatbin_offsets(kiln, tmp_path):
    source = tmp_path / "consts.py"
    source.write_text(CONSTANTS)
    result = kiln("build", source, "--emit", "object", "-o", tmp_path)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "consts.manifest.json").read_text())
    assert manifest["format"] == 2
    assert manifest["archs"] == {"cubins": [], "ptx": []}
    assert "fatbin" not in manifest["specializations"][0]


def test_a_bad_python_is_a_clear_error(kiln, saxpy_like, tmp_path):
    result = kiln("build", saxpy_like, "--module", "m", "-o", tmp_path / "out",
                  "--python-abi", "interpreter", "--python", tmp_path / "no-such-python")
    assert result.returncode == 1
    assert "no-such-python" in result.stderr and "--python" in result.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())

    result = kiln("build", saxpy_like, "--module", "m", "-o", tmp_path / "out",
                  "--python-abi", "interpreter", "--python", "false")
    assert result.returncode == 1
    assert "extension module suffix" in result.stderr


def test_build_without_emit_or_module_is_a_usage_error(kiln, saxpy_like, tmp_path):
    result = kiln("build", saxpy_like, "-o", tmp_path)
    assert result.returncode == 2
    assert "--emit" in result.stderr and "--module" in result.stderr


@pytest.fixture
def saxpy_like(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(CONSTANTS)
    return path


FAKE_RUNTIME = '''\
"""A stand-in for kiln._runtime: its module_loader reads the image."""

import ctypes
import json
import struct
import sys
import types

sys.path.insert(0, {helpers!r})
from kiln_module_format import BUNDLE_SECTION, elf_sections, kiln_checksum


class HostEntries(ctypes.Structure):
    _fields_ = [("thread", ctypes.c_void_p), ("block", ctypes.c_void_p)]


class ModuleImage(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_uint32), ("format_version", ctypes.c_uint32),
                ("cpu_abi_version", ctypes.c_uint32), ("count", ctypes.c_uint32),
                ("module_name", ctypes.c_char_p), ("bundle", ctypes.c_void_p),
                ("bundle_size", ctypes.c_uint64), ("entries", ctypes.POINTER(HostEntries)),
                ("manifest_checksum", ctypes.c_uint64)]


class DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]


_dladdr = ctypes.CDLL(None).dladdr
_dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]


class ModuleDefBase(ctypes.Structure):
    _fields_ = [("refcnt", ctypes.c_ssize_t), ("type", ctypes.c_void_p),
                ("init", ctypes.c_void_p), ("index", ctypes.c_ssize_t),
                ("copy", ctypes.c_void_p)]


class ModuleDef(ctypes.Structure):
    _fields_ = [("base", ModuleDefBase), ("name", ctypes.c_char_p), ("doc", ctypes.c_char_p),
                ("size", ctypes.c_ssize_t), ("methods", ctypes.c_void_p),
                ("slots", ctypes.c_void_p), ("traverse", ctypes.c_void_p),
                ("clear", ctypes.c_void_p), ("free", ctypes.c_void_p)]


# Importing an extension needs a module made from a PyModuleDef.
_definitions = []
_create = ctypes.pythonapi.PyModule_Create2
_create.restype = ctypes.py_object
_create.argtypes = [ctypes.POINTER(ModuleDef), ctypes.c_int]


def _load(address):
    image = ModuleImage.from_address(address)
    # The bundle is not in memory: it is the section .kiln.bundle of the
    # file that holds the image.
    info = DlInfo()
    assert _dladdr(address, ctypes.byref(info))
    with open(info.fname, "rb") as file:
        data = file.read()
    section = elf_sections(data)[BUNDLE_SECTION]
    bundle = data[section["offset"]:section["offset"] + section["size"]]
    (magic, version, header_size, manifest_offset, manifest_size, manifest_checksum,
     payload_offset, payload_size) = struct.unpack_from("<8sIIQQQQQ", bundle)
    manifest = bundle[manifest_offset:manifest_offset + manifest_size]
    name = image.module_name.decode()
    definition = ModuleDef(ModuleDefBase(1), image.module_name, None, -1)
    _definitions.append(definition)
    module = _create(ctypes.byref(definition), 1013)
    module.magic = image.magic
    module.format_version = image.format_version
    module.cpu_abi_version = image.cpu_abi_version
    module.name_in_image = name
    module.bundle_pointer = image.bundle
    module.bundle_size_ok = image.bundle_size == section["size"]
    module.bundle_aligned = section["offset"] % 16 == 0
    module.bundle_magic = magic
    module.manifest_ok = kiln_checksum(manifest) == manifest_checksum
    module.image_checksum_ok = image.manifest_checksum == manifest_checksum
    module.manifest = json.loads(manifest)
    module.entries = [(image.entries[i].thread, image.entries[i].block)
                      for i in range(image.count)]
    return module


_callback = ctypes.CFUNCTYPE(ctypes.py_object, ctypes.c_void_p)(_load)
_capsule_name = b"kiln._runtime.module_loader"
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
module_loader = _capsule_new(ctypes.cast(_callback, ctypes.c_void_p), _capsule_name, None)
'''

IMPORT_AND_REPORT = """\
import json
import pkg.vector_add as m
print(json.dumps({
    "magic": m.magic, "format_version": m.format_version,
    "cpu_abi_version": m.cpu_abi_version, "name": m.name_in_image, "file": m.__file__,
    "module_name": m.__name__, "bundle_aligned": m.bundle_aligned,
    "bundle_pointer": m.bundle_pointer, "bundle_size_ok": m.bundle_size_ok,
    "image_checksum_ok": m.image_checksum_ok,
    "bundle_magic": m.bundle_magic.decode(), "manifest_ok": m.manifest_ok,
    "entries": m.entries, "block_entry": [s["block_entry"] for s in m.manifest["specializations"]],
}))
"""


def test_pyinit_hands_the_image_to_the_runtimes_module_loader(built, tmp_path, repo_root):
    fake = tmp_path / "fake"
    (fake / "kiln").mkdir(parents=True)
    (fake / "kiln" / "__init__.py").write_text("")
    helpers = str(pathlib.Path(__file__).resolve().parent)
    (fake / "kiln" / "_runtime.py").write_text(FAKE_RUNTIME.format(helpers=helpers))
    (fake / "pkg").mkdir()
    (fake / "pkg" / "__init__.py").write_text("")
    shutil.copy(built[0], fake / "pkg")
    env = dict(os.environ, PYTHONPATH=str(fake))
    result = subprocess.run([sys.executable, "-c", IMPORT_AND_REPORT], capture_output=True,
                            text=True, env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["magic"] == 0x4B494C4E
    assert report["format_version"] == MODULE_FORMAT_VERSION
    assert report["cpu_abi_version"] == CPU_ABI_VERSION
    assert report["name"] == "pkg.vector_add" and report["module_name"] == "pkg.vector_add"
    assert report["file"].endswith(STABLE_ABI_SUFFIX)
    assert report["bundle_pointer"] is None  # null since format 2
    assert report["bundle_size_ok"] and report["image_checksum_ok"]
    assert report["bundle_aligned"] and report["bundle_magic"] == "KILNBNDL"
    assert report["manifest_ok"]
    assert len(report["entries"]) == 4
    for (thread, block), has_block in zip(report["entries"], report["block_entry"]):
        assert bool(block) == has_block
        assert thread, "every specialization has a thread entry, which the engine's reference mode runs"
    assert len({thread for thread, block in report["entries"]}) == 4


def test_import_without_the_runtime_fails_cleanly(built, tmp_path):
    fake = tmp_path / "fake"
    (fake / "kiln").mkdir(parents=True)
    (fake / "kiln" / "__init__.py").write_text("")
    (fake / "kiln" / "_runtime.py").write_text("")  # no module_loader
    (fake / "pkg").mkdir()
    (fake / "pkg" / "__init__.py").write_text("")
    shutil.copy(built[0], fake / "pkg")
    result = subprocess.run(
        [sys.executable, "-c", "import pkg.vector_add"], capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=str(fake)), cwd=tmp_path, timeout=60)
    assert result.returncode == 1
    assert "AttributeError" in result.stderr and "module_loader" in result.stderr


@pytest.mark.parametrize("name", ["pkg.1bad", "pkg..kernels", "kernels-v2", "pkg.kérnels"])
def test_a_module_name_python_cannot_import_is_refused(kiln, repo_root, tmp_path, name):
    result = kiln("build", repo_root / "examples" / "vector_add.py", "--module", name, "-o", tmp_path, "--arch", "80")
    assert result.returncode == 2, f"--module {name!r} was accepted: {result.stdout}"
    assert "is not a module name Kiln can build" in result.stderr, result.stderr
    assert not list(tmp_path.iterdir()), "a refused build must write nothing"


def test_a_file_stem_that_is_not_an_identifier_asks_for_module(kiln, repo_root, tmp_path):
    source = tmp_path / "my-kernels.py"
    shutil.copy(repo_root / "examples" / "vector_add.py", source)
    result = kiln("build", source, "--emit", "module", "-o", tmp_path / "out", "--arch", "80")
    assert result.returncode == 2 and "name the module with --module" in result.stderr, result.stderr


@pytest.mark.parametrize("option", ["--debug", "--lineinfo"])
def test_ufuncs_build_with_line_information(kiln, repo_root, tmp_path, option):
    # The loops Kiln writes around a ufunc's function have no source line of
    # their own; with line information on, their calls still need one.
    result = kiln("build", "--module", "ufuncs", "--arch", "80", option, "-o", tmp_path,
                  repo_root / "examples" / "ufuncs.py")
    assert result.returncode == 0, result.stderr
