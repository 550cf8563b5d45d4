"""`kiln build`: what each --emit form writes, reproducibility, and errors."""

import json
import os
import pathlib
import stat
import subprocess

import pytest

SAXPY = """\
from numba import cuda, float32, void


@cuda.jit(void(float32, float32[::1], float32[::1]))
def saxpy(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + out[i]


@cuda.jit(["void(int32[:], int32)", "void(int64[:], int64)"])
def fill(values, v):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        values[i] = v
"""

TOO_MUCH_SHARED = """\
from numba import cuda, float64, void


@cuda.jit(void(float64[::1]))
def greedy(out):
    tile = cuda.shared.array(20000, float64)
    tile[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    out[cuda.threadIdx.x] = tile[0]
"""


@pytest.fixture
def saxpy(tmp_path):
    path = tmp_path / "saxpy.py"
    path.write_text(SAXPY)
    return path


def names(folder):
    return sorted(p.name for p in pathlib.Path(folder).iterdir())


def test_ptx_is_one_file_per_specialization_and_ptx_target(kiln, saxpy, tmp_path):
    out = tmp_path / "out"
    result = kiln("build", saxpy, "--emit", "ptx", "-o", out, "--arch", "80;90-real;100-real")
    assert result.returncode == 0, result.stderr
    # sm_100 cubins are assembled from sm_90 PTX, so PTX exists for 80 and 90.
    assert names(out) == [
        f"{kernel}.{arch}.ptx"
        for kernel in ("fill.0", "fill.1", "saxpy.0")
        for arch in ("sm_80", "sm_90")
    ] + ["saxpy.manifest.json"]
    ptx = (out / "saxpy.0.sm_80.ptx").read_text()
    assert ".target sm_80" in ptx
    assert ".visible .entry _kiln_5saxpy5saxpy_0(" in ptx


def test_cubins_and_fatbins_cover_the_requested_architectures(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "cubin", "-o", tmp_path / "c", "--arch", "75;120-real")
    assert result.returncode == 0, result.stderr
    assert "saxpy.0.sm_75.cubin" in names(tmp_path / "c")
    assert "saxpy.0.sm_120.cubin" in names(tmp_path / "c")
    cubin = (tmp_path / "c" / "saxpy.0.sm_120.cubin").read_bytes()
    assert cubin[:4] == b"\x7fELF"

    result = kiln("build", saxpy, "--emit", "fatbin", "-o", tmp_path / "f", "--arch", "75;120-real")
    assert result.returncode == 0, result.stderr
    assert names(tmp_path / "f") == ["saxpy.fatbin", "saxpy.manifest.json"], (
        "the module's kernels are not in one fat binary")
    fatbin = (tmp_path / "f" / "saxpy.fatbin").read_bytes()
    assert fatbin[:4] == bytes.fromhex("50ed55ba"), "not a fat binary"


def test_llvm_and_host_objects(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "llvm", "-o", tmp_path / "ll", "--arch", "90")
    assert result.returncode == 0, result.stderr
    ir = (tmp_path / "ll" / "saxpy.0.sm_90.ll").read_text()
    assert 'target triple = "nvptx64-nvidia-cuda"' in ir

    result = kiln("build", saxpy, "--emit", "object", "-o", tmp_path / "o")
    assert result.returncode == 0, result.stderr
    assert names(tmp_path / "o") == ["fill.0.o", "fill.1.o", "saxpy.0.o", "saxpy.manifest.json"]
    assert (tmp_path / "o" / "saxpy.0.o").read_bytes()[:4] == b"\x7fELF"


def test_manifest_records_each_specializations_parameter_layout(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "fatbin", "-o", tmp_path, "--arch", "80;100-real")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "saxpy.manifest.json").read_text())
    assert manifest["format"] == 2
    assert manifest["module"] == "saxpy"
    assert manifest["archs"] == {"cubins": [80, 100], "ptx": [80]}
    assert manifest["source"]["file"] == "saxpy.py"
    by_symbol = {s["symbol"]: s for s in manifest["specializations"]}
    spec = by_symbol["saxpy.saxpy$0"]
    assert spec["entry"] == "_kiln_5saxpy5saxpy_0"
    assert spec["args"] == ["float32", "array(float32, 1d, C)", "array(float32, 1d, C)"]
    assert [(p["argument"], p["role"], p["type"]) for p in spec["params"]] == [
        (0, "value", "f32"),
        (1, "data", "ptr"), (1, "shape", "i64"), (1, "stride", "i64"),
        (2, "data", "ptr"), (2, "shape", "i64"), (2, "stride", "i64"),
    ]
    assert spec["cubins"] == [80, 100] and spec["ptx"] == [80]
    assert spec["files"] == ["saxpy.fatbin"]
    assert by_symbol["saxpy.fill$1"]["args"] == ["array(int64, 1d, A)", "int64"]


def test_typed_ir_shows_every_specialization(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "typed", "-o", tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "saxpy.typed").read_text()
    assert "kernel @saxpy.saxpy$0(float32 %0 a, array(float32, 1d, C) %1 x" in text
    assert "kernel @saxpy.fill$1" in text


def test_verbose_reports_registers_per_specialization_and_arch(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "fatbin", "-o", tmp_path, "--arch", "80;90", "-v")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = lines.index("  kernel 'saxpy' (float32, array(float32, 1d, C), array(float32, 1d, C))")
    assert lines[header + 1].startswith("    sm_80: ") and "registers" in lines[header + 1]
    assert lines[header + 2].startswith("    sm_90: ") and "spill" in lines[header + 2]


def test_output_is_byte_identical_across_builds(kiln, saxpy, tmp_path):
    for folder in ("a", "b"):
        result = kiln("build", saxpy, "--emit", "fatbin", "-o", tmp_path / folder, "--arch", "80;90")
        assert result.returncode == 0, result.stderr
    for name in names(tmp_path / "a"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    for folder in ("pa", "pb"):
        result = kiln("build", saxpy, "--emit", "ptx", "-o", tmp_path / folder, "-j", "1" if folder == "pa" else "2")
        assert result.returncode == 0, result.stderr
    for name in names(tmp_path / "pa"):
        assert (tmp_path / "pa" / name).read_text() == (tmp_path / "pb" / name).read_text(), name


def test_ptxas_errors_name_the_kernel_and_architecture(kiln, tmp_path):
    path = tmp_path / "greedy.py"
    path.write_text(TOO_MUCH_SHARED)
    result = kiln("build", path, "--emit", "cubin", "-o", tmp_path / "out", "--arch", "80")
    assert result.returncode == 1
    assert "kernel 'greedy' (array(float64, 1d, C))" in result.stderr
    assert "sm_80" in result.stderr
    assert "shared" in result.stderr.lower()
    assert "/tmp/" not in result.stderr.replace(str(tmp_path), ""), "temporary paths leak"
    assert not (tmp_path / "out").exists() or names(tmp_path / "out") == []


def test_bad_architecture_lists_are_refused(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "ptx", "-o", tmp_path, "--arch", "sm_61")
    assert result.returncode == 2, "a bad --arch is a usage error"
    assert "61" in result.stderr


def test_native_without_a_gpu_is_a_clear_error(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "ptx", "-o", tmp_path, "--arch", "native")
    assert result.returncode == 1
    assert "native" in result.stderr


def test_type_errors_stop_the_build_with_diagnostics(kiln, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text(SAXPY.replace("a * x[i]", "a * x"))
    result = kiln("build", path, "--emit", "ptx", "-o", tmp_path / "out")
    assert result.returncode == 1
    assert "broken.py:" in result.stderr and "error:" in result.stderr

def without_toolkit(tmp_path):
    """An environment whose $CUDA_HOME names a folder that does not exist."""
    return {**os.environ, "CUDA_HOME": str(tmp_path / "no-cuda")}


def test_a_module_with_errors_reports_them_rather_than_a_missing_toolkit(kiln, tmp_path):
    # The toolkit is looked for while the front end reads the module; the
    # module's errors are what the user hears about.
    path = tmp_path / "broken.py"
    path.write_text(SAXPY.replace("a * x[i]", "a * x"))
    result = kiln("build", path, "--emit", "ptx", "-o", tmp_path / "out", env=without_toolkit(tmp_path))
    assert result.returncode == 1
    assert "broken.py:" in result.stderr and "CUDA_HOME" not in result.stderr, result.stderr


def test_a_correct_module_without_a_toolkit_names_the_toolkit(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "ptx", "-o", tmp_path / "out", env=without_toolkit(tmp_path))
    assert result.returncode == 1
    assert f"$CUDA_HOME is '{tmp_path / 'no-cuda'}', which is not a directory" in result.stderr, \
        result.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_an_unusable_cache_is_one_warning_and_a_module_with_errors_hears_nothing_of_it(kiln, saxpy, tmp_path):
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache folder would be")
    out = tmp_path / "out"
    result = kiln("build", saxpy, "--emit", "ptx", "-o", out, "--cache-dir", not_a_folder, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("warning") == 1, result.stderr
    assert "building without the cache" in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert len(report["warnings"]) == 1, report["warnings"]
    assert report["written"] and all(pathlib.Path(p).is_file() for p in report["written"])

    broken = tmp_path / "broken.py"
    broken.write_text(SAXPY.replace("a * x[i]", "a * x"))
    result = kiln("build", broken, "--emit", "ptx", "-o", out, "--cache-dir", not_a_folder)
    assert result.returncode == 1
    assert "broken.py:" in result.stderr and "warning" not in result.stderr, \
        "a build that stops at the module's errors says nothing of the cache it did not use:\n" + \
        result.stderr



def toolkit_logging_ptxas(kiln, tmp_path):
    """The installed toolkit without its version.json (as NVIDIA's pip
    wheels are), whose ptxas notes its arguments in a log before running."""
    real = pathlib.Path(json.loads(kiln("targets", "--json").stdout)["toolkit"]["root"])
    root = tmp_path / "cuda"
    (root / "bin").mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name not in ("bin", "version.json"):
            (root / entry.name).symlink_to(entry)
    for tool in (real / "bin").iterdir():
        (root / "bin" / tool.name).symlink_to(tool)
    log = tmp_path / "ptxas.log"
    ptxas = root / "bin" / "ptxas"
    ptxas.unlink()
    ptxas.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real / "bin" / "ptxas"} "$@"\n')
    ptxas.chmod(0o755)
    return root, log


def test_a_warm_build_remembers_the_toolkit_version_rather_than_asking_ptxas(kiln, saxpy, tmp_path):
    root, log = toolkit_logging_ptxas(kiln, tmp_path)
    environment = {**os.environ, "CUDA_HOME": str(root)}
    build = ("build", saxpy, "--emit", "cubin", "--arch", "80", "-o", tmp_path / "out",
             "--cache-dir", tmp_path / "cache")
    cold = kiln(*build, env=environment)
    assert cold.returncode == 0, cold.stderr
    asked = log.read_text().splitlines()
    assert asked.count("--version") == 1, f"the cold build ran ptxas so:\n{asked}"

    warm = kiln(*build, env=environment)
    assert warm.returncode == 0, warm.stderr
    assert log.read_text().splitlines() == asked, \
        "a warm build started ptxas, for its version or anything else"

    uncached = kiln(*build, "--no-cache", env=environment)
    assert uncached.returncode == 0, uncached.stderr
    assert log.read_text().splitlines().count("--version") == 2, \
        "a build without the cache used the memo kept in the cache's folder"


def test_unwritable_output_folder_is_an_error(kiln, saxpy, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = kiln("build", saxpy, "--emit", "ptx", "-o", blocker / "sub")
    assert result.returncode == 1
    assert "sub" in result.stderr


def test_unknown_emit_kind_is_a_usage_error(kiln, saxpy, tmp_path):
    result = kiln("build", saxpy, "--emit", "exe", "-o", tmp_path)
    assert result.returncode == 2


def test_every_example_builds_a_fatbin_for_the_default_architectures(kiln, repo_root, tmp_path):
    examples = sorted((repo_root / "examples").glob("*.py"))
    assert len(examples) >= 10, f"examples/ holds {len(examples)} kernel modules; the test needs them all"
    for example in examples:
        result = kiln("build", example, "--emit", "fatbin", "-o", tmp_path / example.stem)
        assert result.returncode == 0, f"{example.name}: {result.stderr}"
        assert names(tmp_path / example.stem), f"{example.name} produced nothing"


OPTIONS = """\
import math
from numba import cuda, float32, void


@cuda.jit(void(float32[::1]))
def plain(x):
    i = cuda.grid(1)
    x[i] = math.sin(x[i]) / x[i]


@cuda.jit(void(float32[::1]), max_registers=32, launch_bounds=(128, 2))
def limited(x):
    i = cuda.grid(1)
    x[i] = math.sin(x[i]) / x[i]


@cuda.jit(void(float32[::1]), fastmath=True)
def fast(x):
    i = cuda.grid(1)
    x[i] = math.sin(x[i]) / x[i]


@cuda.jit(void(float32[::1]), lineinfo=True)
def lines(x):
    i = cuda.grid(1)
    x[i] = math.sin(x[i]) / x[i]


@cuda.jit(void(float32[::1]), debug=True, opt=False)
def debugged(x):
    i = cuda.grid(1)
    x[i] = math.sin(x[i]) / x[i]
"""


@pytest.fixture
def options_module(tmp_path):
    path = tmp_path / "options.py"
    path.write_text(OPTIONS)
    return path


def ptx_of(kiln, path, out, *flags):
    result = kiln("build", path, "--emit", "ptx", "-o", out, "--arch", "80", *flags)
    assert result.returncode == 0, result.stderr
    return {p.name.split(".")[0]: p.read_text() for p in pathlib.Path(out).glob("*.ptx")}


def test_decorator_options_reach_the_ptx(kiln, options_module, tmp_path):
    ptx = ptx_of(kiln, options_module, tmp_path / "out")
    assert ".maxnreg" not in ptx["plain"] and "sin.approx" not in ptx["plain"]
    assert ".maxnreg 32" in ptx["limited"]
    assert ".maxntid 128, 1, 1" in ptx["limited"] and ".minnctapersm 2" in ptx["limited"]
    # fastmath: libdevice's approximate sine, flushing subnormals, approximate division.
    assert "sin.approx.ftz.f32" in ptx["fast"] and "div.approx.ftz.f32" in ptx["fast"]
    assert "\t.loc\t" in ptx["lines"] and "\t.loc\t" not in ptx["plain"]
    assert ".section\t.debug_info" in ptx["debugged"]
    assert ".section\t.debug_info" not in ptx["lines"], "lineinfo wants line directives only"


def test_command_line_options_override_every_kernel(kiln, options_module, tmp_path):
    ptx = ptx_of(kiln, options_module, tmp_path / "out", "--fastmath", "--lineinfo",
                 "--max-registers", "40")
    for name in ("plain", "lines"):
        assert "sin.approx.ftz.f32" in ptx[name], name
        assert "\t.loc\t" in ptx[name], name
        assert ".maxnreg 40" in ptx[name], name


def test_xptxas_flags_reach_ptxas(kiln, options_module, tmp_path):
    result = kiln("build", options_module, "--emit", "cubin", "-o", tmp_path / "out",
                  "--arch", "80", "-Xptxas", "--warn-on-spills,--no-such-ptxas-flag")
    assert result.returncode == 1
    assert "no-such-ptxas-flag" in result.stderr
    assert "Unknown option" in result.stderr, "the flag should reach ptxas, not kiln's parser"

    result = kiln("build", options_module, "--emit", "cubin", "-o", tmp_path / "out", "-Xptxas")
    assert result.returncode == 2
    assert "-Xptxas needs a value" in result.stderr


def test_cudaarchs_selects_the_architectures(kiln, saxpy, tmp_path):
    import os

    environment = dict(os.environ, CUDAARCHS="86-real")
    result = kiln("build", saxpy, "--emit", "cubin", "-o", tmp_path, env=environment)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.glob("*.cubin")) == [
        "fill.0.sm_86.cubin", "fill.1.sm_86.cubin", "saxpy.0.sm_86.cubin"]


def test_cuda_c_files_in_link_are_compiled_and_linked(kiln, repo_root, tmp_path):
    example = repo_root / "examples" / "curand_interop" / "curand_kernels.py"
    result = kiln("build", example, "--emit", "fatbin", "-o", tmp_path, "--arch", "80-real", "-v")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "curand_kernels.manifest.json").read_text())
    files = {spec["name"]: spec["files"] for spec in manifest["specializations"]}
    # Kernels that link other device code each have an image of their own.
    assert files == {"init_states": ["curand_kernels.fatbin"],
                     "count_low_bits_native": ["curand_kernels.1.fatbin"]}, files
    assert (tmp_path / "curand_kernels.1.fatbin").read_bytes()[:4] == bytes.fromhex("50ed55ba")
    assert "kernel 'count_low_bits_native'" in result.stdout
    assert "sm_80:" in result.stdout


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_outputs_and_their_folders_follow_the_umask(kiln, saxpy, tmp_path, umask):
    out = tmp_path / "new" / "folder"
    depfile = tmp_path / "deps" / "saxpy.d"
    cache = tmp_path / "cache"
    result = subprocess.run(
        [kiln.binary, "build", str(saxpy), "--emit", "ptx", "--arch", "80", "-o", str(out), "-q",
         "--depfile", str(depfile)],
        capture_output=True, text=True, timeout=300, preexec_fn=lambda: os.umask(umask),
        env=dict(os.environ, KILN_CACHE_DIR=str(cache)))
    assert result.returncode == 0, result.stderr
    folders = [tmp_path / "new", out, depfile.parent, *(p for p in cache.rglob("*") if p.is_dir())]
    assert len(folders) > 4, "the build must have filled the cache"
    for folder in folders:
        mode = stat.S_IMODE(folder.stat().st_mode)
        assert mode == 0o777 & ~umask, f"{folder} has mode {mode:o} under umask {umask:03o}"
    blobs = [p for p in (cache / "objects").rglob("*") if p.is_file()]
    assert blobs, "the cache must hold objects"
    for written in [*out.iterdir(), depfile, *blobs]:
        mode = stat.S_IMODE(written.stat().st_mode)
        assert mode == 0o666 & ~umask, f"{written} has mode {mode:o} under umask {umask:03o}"


DECLARED_WITH_LINK = '''
from numba import cuda

mul = cuda.declare_device("mul_f32_f32", sig="float32(float32, float32)", link=["functions.cu"])


@cuda.jit(device=True)
def scaled(x):
    return mul(x, 2.0)


@cuda.jit("void(float32[::1])")
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = scaled(a[i])


@cuda.jit("void(float32[::1])")
def plain(a):
    a[0] = 1.0
'''

FUNCTIONS_CU = '''
extern "C" __device__ int mul_f32_f32(float *result, float a, float b) {
  *result = a * b;
  return 0;
}
'''


def build_declared(kiln, tmp_path, source):
    """`source` (and functions.cu beside it) built to fat binaries: the
    output folder and the manifest."""
    (tmp_path / "declared.py").write_text(source)
    (tmp_path / "functions.cu").write_text(FUNCTIONS_CU)
    out = tmp_path / "out"
    result = kiln("build", tmp_path / "declared.py", "--emit", "fatbin", "-o", out, "--arch", "80-real")
    assert result.returncode == 0, result.stderr
    return out, json.loads((out / "declared.manifest.json").read_text())


def test_a_declared_device_function_links_its_files_into_the_kernels_that_call_it(kiln, tmp_path):
    """numba-cuda's form: declare_device(name, sig=..., link=[...]); the
    kernel calling it (through a device function) links the file, as if it
    named it in its own link=, and the other kernel links nothing."""
    out, manifest = build_declared(kiln, tmp_path, DECLARED_WITH_LINK)
    files = {spec["name"]: spec["files"] for spec in manifest["specializations"]}
    assert files["double"] != files["plain"], f"the kernel that links code has an image of its own: {files}"
    [linked] = files["double"]
    assert b"mul_f32_f32" in (out / linked).read_bytes(), "functions.cu must be linked into double's image"


def test_declare_device_names_an_option_it_does_not_know(kiln, tmp_path):
    (tmp_path / "declared.py").write_text(DECLARED_WITH_LINK.replace('link=["functions.cu"]', 'lnk=["f.cu"]'))
    result = kiln("check", tmp_path / "declared.py")
    assert result.returncode == 1
    assert "unknown option 'lnk'" in result.stderr, result.stderr


def test_a_device_function_declared_cooperative_makes_its_callers_cooperative(kiln, tmp_path):
    """use_cooperative=True says the foreign function syncs the grid: the
    kernels that call it, directly or not, need a cooperative launch."""
    _, manifest = build_declared(
        kiln, tmp_path,
        DECLARED_WITH_LINK.replace('link=["functions.cu"])', 'link=["functions.cu"], use_cooperative=True)'))
    cooperative = {spec["name"]: spec["cooperative"] for spec in manifest["specializations"]}
    assert cooperative == {"double": True, "plain": False}, cooperative

    (tmp_path / "declared.py").write_text(
        DECLARED_WITH_LINK.replace('link=["functions.cu"])', 'link=["functions.cu"], use_cooperative="yes")'))
    result = kiln("check", tmp_path / "declared.py")
    assert result.returncode == 1
    assert "use_cooperative" in result.stderr and "True or False" in result.stderr, result.stderr
