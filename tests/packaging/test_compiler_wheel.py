"""The compiler's manylinux wheel, made by scripts/build-wheel.sh, as a user
gets it: pip installs it into a fresh virtual environment with no LLVM
package and no compiler on PATH, where it builds a kernel module, compiles a
`from kiln import cuda` kernel in process, and runs both. With the [cuda]
extra, NVIDIA's wheels supply ptxas, fatbinary and libdevice, and the wheel
needs no CUDA toolkit either. It is manylinux_2_28 (glibc 2.28, the
manylinux containers library authors build in) and carries LLVM once.

Everything installs offline from .venv/wheelhouse, which scripts/setup.sh
fills (numpy, nvidia-cuda-nvcc and what it requires)."""

import functools
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

from checked_run import run_checked

pytestmark = pytest.mark.slow

# What every manylinux system provides and the wheel may ask for: glibc's
# libraries and zlib. libstdc++ and libgcc_s are on manylinux's list too, but
# Kiln links them statically, so that the C++ it is built with runs anywhere.
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
                    "libresolv.so.2", "libutil.so.1", "ld-linux-x86-64.so.2", "libz.so.1"}
COMPILERS = ["cc", "c++", "gcc", "g++", "clang", "clang++", "clang-19", "clang++-19", "ld",
             "ld.lld", "nvcc", "ptxas", "llvm-config", "llvm-config-19"]

KERNELS = textwrap.dedent("""\
    from numba import cuda

    @cuda.jit("void(float32[::1], float32[::1], float32[::1])")
    def add(x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + y[i] * 2
    """)

RUN_BUILT_MODULE = textwrap.dedent("""\
    import importlib.util
    import numpy as np
    import kiln.cuda as cuda
    assert importlib.util.find_spec("numba") is None
    assert importlib.util.find_spec("llvmlite") is None
    from kernels import add
    import kernels
    assert kernels.__file__.endswith(".so"), kernels.__file__
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    add[8, 128](x, x, out)
    np.testing.assert_array_equal(out, x * 3)
    print("built module ran")
    """)

COMPILE_IN_PROCESS = textwrap.dedent("""\
    import numpy as np
    from kiln import cuda

    @cuda.jit
    def scale(values, factor):
        i = cuda.grid(1)
        if i < values.size:
            values[i] *= factor

    values = np.arange(300, dtype=np.float64)
    scale[3, 128](values, 2.5)
    np.testing.assert_array_equal(values, np.arange(300) * 2.5)
    print("compiled in process and ran")
    """)


run = functools.partial(run_checked, timeout=1800)


@pytest.fixture(scope="module")
def wheelhouse(repo_root):
    house = repo_root / ".venv" / "wheelhouse"
    for wanted in ("numpy-*.whl", "nvidia_cuda_nvcc-*.whl"):
        if not list(house.glob(wanted)):
            pytest.fail(f"no {wanted} in {house}: scripts/setup.sh downloads it")
    return house


@pytest.fixture(scope="module")
def compiler_wheel(repo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ)
    env.pop("KILN", None)
    run(["bash", repo_root / "scripts" / "build-wheel.sh", "--out", out], env=env)
    wheels = sorted(out.glob("kiln_compiler-*.whl"))
    assert len(wheels) == 1, f"build-wheel.sh left {wheels} in {out}"
    return wheels[0]


def user_environment(venv, cache):
    """What a user of the wheel has: the environment's bin/ on PATH and
    nothing else (no compiler, no CUDA toolkit on PATH, no $CUDA_HOME)."""
    return {"PATH": str(venv / "bin"), "HOME": str(cache.parent), "KILN_TARGET": "cpu",
            "KILN_CACHE_DIR": str(cache), "PIP_NO_INDEX": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "LC_ALL": "C.UTF-8"}


def fresh_venv_with(requirement, wheel, wheelhouse, tmp_path_factory):
    root = tmp_path_factory.mktemp("user")
    venv = root / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", venv])
    env = user_environment(venv, root / "cache")
    run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-index",
         "--find-links", wheelhouse, "--find-links", wheel.parent, requirement], env=env)
    return venv, env


@pytest.fixture(scope="module")
def runtime_wheel(repo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("runtime-dist")
    run(["bash", repo_root / "scripts" / "build-wheel.sh", "--runtime", "--out", out])
    wheels = sorted(out.glob("kiln_runtime-*.whl"))
    assert len(wheels) == 1, f"build-wheel.sh --runtime left {wheels} in {out}"
    return wheels[0]


@pytest.fixture(scope="module")
def plain_install(compiler_wheel, wheelhouse, tmp_path_factory):
    return fresh_venv_with("kiln-compiler", compiler_wheel, wheelhouse, tmp_path_factory)


@pytest.fixture(scope="module")
def cuda_install(compiler_wheel, wheelhouse, tmp_path_factory):
    return fresh_venv_with("kiln-compiler[cuda]", compiler_wheel, wheelhouse, tmp_path_factory)


def needed_libraries(data):
    elf = ELFFile(io.BytesIO(data))
    needed = []
    for section in elf.iter_sections():
        if isinstance(section, DynamicSection):
            needed += [tag.needed for tag in section.iter_tags() if tag.entry.d_tag == "DT_NEEDED"]
    return needed


def test_the_wheel_is_manylinux_and_needs_nothing_manylinux_lacks_that_it_does_not_bundle(compiler_wheel):
    assert "manylinux_2_" in compiler_wheel.name, compiler_wheel.name
    with zipfile.ZipFile(compiler_wheel) as wheel:
        names = wheel.namelist()
        bundled = {pathlib.PurePosixPath(name).name for name in names
                   if name.startswith("kiln_compiler.libs/")}
        contents = {name: wheel.read(name) for name in names}
    binaries = {name: data for name, data in contents.items() if data[:4] == b"\x7fELF"}
    assert any(name.endswith("/kiln") for name in binaries), names
    assert any("/_compiler." in name for name in binaries), names
    for name, data in binaries.items():
        for library in needed_libraries(data):
            assert "LLVM" not in library and "lld" not in library, (name, library)
            assert library in SYSTEM_LIBRARIES or library in bundled or \
                library == "libkiln-compiler.so", (
                f"{name} needs {library}, which manylinux lacks and the wheel does not bundle")


def glibc_versions_needed(data):
    """The GLIBC_x.y versions an ELF file binds symbols at."""
    versions = set()
    for section in ELFFile(io.BytesIO(data)).iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for _, auxiliaries in section.iter_versions():
                for auxiliary in auxiliaries:
                    if auxiliary.name.startswith("GLIBC_"):
                        versions.add(tuple(int(part) for part in auxiliary.name[6:].split(".")))
    return versions


def assert_runs_on_glibc_2_28(wheel_path, binary_count):
    """What auditwheel checks, and the tag it gives: every ELF file in the
    wheel binds glibc's symbols at versions 2.28 has."""
    tag = wheel_path.name.removesuffix(".whl").split("-")[-1]
    assert re.fullmatch(r"manylinux_2_\d+_x86_64", tag), wheel_path.name
    assert int(tag.split("_")[2]) <= 28, wheel_path.name
    with zipfile.ZipFile(wheel_path) as wheel:
        binaries = {name: wheel.read(name) for name in wheel.namelist()}
    binaries = {name: data for name, data in binaries.items() if data[:4] == b"\x7fELF"}
    assert len(binaries) == binary_count, sorted(binaries)
    for name, data in binaries.items():
        newest = max(glibc_versions_needed(data))
        assert newest <= (2, 28), f"{name} needs GLIBC_{'.'.join(map(str, newest))}"
    audit = pathlib.Path(sys.executable).parent / "auditwheel"
    shown = " ".join(run([audit, "show", wheel_path]).stdout.split())
    found = re.search(r'consistent with the following platform tag: "manylinux_2_(\d+)_x86_64"',
                      shown)
    assert found and int(found.group(1)) <= 28, shown


def test_every_binary_of_the_compiler_runs_on_glibc_2_28(compiler_wheel):
    # kiln, libkiln-compiler.so, kiln._compiler and kiln._runtime.
    assert_runs_on_glibc_2_28(compiler_wheel, 4)


def test_the_runtime_wheel_runs_on_glibc_2_28_and_runs_what_the_compiler_built(
        runtime_wheel, plain_install, wheelhouse, tmp_path, tmp_path_factory):
    """A user with kiln-runtime alone runs a module kiln-compiler built."""
    assert_runs_on_glibc_2_28(runtime_wheel, 1)
    compiler_venv, compiler_env = plain_install
    (tmp_path / "kernels.py").write_text(KERNELS)
    run([compiler_venv / "bin" / "kiln", "build", "kernels.py", "--module", "kernels", "-o",
         "built"], cwd=tmp_path, env=compiler_env)
    (tmp_path / "kernels.py").unlink()
    user_venv, user_env = fresh_venv_with("kiln-runtime", runtime_wheel, wheelhouse,
                                          tmp_path_factory)
    ran = run([user_venv / "bin" / "python", "-c", RUN_BUILT_MODULE], cwd=tmp_path / "built",
              env=user_env)
    assert "built module ran" in ran.stdout


def test_the_wheel_carries_llvm_once_and_stays_under_30_mb(compiler_wheel):
    """kiln and kiln._compiler both load the one shared compiler library, in
    the environment's lib/kiln/; neither holds LLVM itself."""
    assert compiler_wheel.stat().st_size <= 30 * 1024 * 1024, compiler_wheel.stat().st_size
    with zipfile.ZipFile(compiler_wheel) as wheel:
        sizes = {info.filename: info.file_size for info in wheel.infolist()}
        library = [name for name in sizes
                   if name.endswith(".data/data/lib/kiln/libkiln-compiler.so")]
        assert len(library) == 1, sorted(sizes)
        for suffix in (".data/scripts/kiln", "kiln/_compiler.abi3.so"):
            [name] = [name for name in sizes if name.endswith(suffix)]
            assert sizes[name] < 4 * 1024 * 1024, f"{name} is {sizes[name]} bytes: LLVM again?"
            assert "libkiln-compiler.so" in needed_libraries(wheel.read(name)), name


def test_one_wheel_serves_every_cpython_from_3_11(compiler_wheel):
    """kiln._compiler and kiln._runtime use CPython's stable ABI alone, as the
    wheel's tag (cp311-abi3) says and abi3audit checks (it checks the shared
    compiler library as well, which uses no CPython API at all)."""
    assert "-cp311-abi3-" in compiler_wheel.name, compiler_wheel.name
    audit = pathlib.Path(sys.executable).parent / "abi3audit"
    result = run([audit, "--strict", "--summary", compiler_wheel])
    summary = " ".join(result.stderr.split())
    assert "3 extensions scanned; 0 ABI version mismatches and 0 ABI violations" in summary, summary


def test_a_fresh_venv_without_llvm_or_compilers_builds_and_runs_a_kernel_module(
        plain_install, tmp_path):
    venv, env = plain_install
    for compiler in COMPILERS:
        assert shutil.which(compiler, path=env["PATH"]) is None, compiler
    (tmp_path / "kernels.py").write_text(KERNELS)
    built = run([venv / "bin" / "kiln", "build", "kernels.py", "--module", "kernels", "-o", ".",
                 "--depfile", "kernels.d"], cwd=tmp_path, env=env)
    assert ".so" in built.stdout, built.stdout
    # A new compiler library (kiln's code) makes build systems build again.
    library = (venv / "lib" / "kiln" / "libkiln-compiler.so").resolve()
    assert str(library) in (tmp_path / "kernels.d").read_text()
    ran = run([venv / "bin" / "python", "-c", RUN_BUILT_MODULE], cwd=tmp_path, env=env)
    assert "built module ran" in ran.stdout


def test_the_installed_cmake_package_names_the_installed_kiln(plain_install):
    venv, env = plain_install
    cmake_dir = run([venv / "bin" / "python", "-m", "kiln", "--cmake-dir"], env=env).stdout.strip()
    assert (pathlib.Path(cmake_dir) / "KilnConfig.cmake").is_file(), cmake_dir
    command = run([venv / "bin" / "python", "-m", "kiln", "--executable"], env=env).stdout.strip()
    assert run([command, "--version"], env=env).stdout.startswith("kiln ")


def test_a_usage_error_is_reported_through_the_wheels_own_unwinder(plain_install):
    """The command line parser reports a usage error by throwing: in the
    wheel's kiln, libgcc's unwinder finds frames through the definition of
    _dl_find_object over glibc 2.28."""
    venv, env = plain_install
    done = subprocess.run([venv / "bin" / "kiln", "build", "kernels.py", "--no-such-option"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "--no-such-option" in done.stderr, done.stderr


def test_a_fresh_venv_compiles_kiln_cuda_kernels_in_process(plain_install, tmp_path):
    venv, env = plain_install
    (tmp_path / "scaling.py").write_text(COMPILE_IN_PROCESS)
    ran = run([venv / "bin" / "python", "scaling.py"], cwd=tmp_path, env=env)
    assert "compiled in process and ran" in ran.stdout


def test_the_cuda_extra_is_the_toolkit_kiln_finds(cuda_install):
    venv, env = cuda_install
    shown = run([venv / "bin" / "kiln", "targets", "--json"], env=env)
    toolkit = json.loads(shown.stdout)["toolkit"]
    site_packages = next((venv / "lib").glob("python3*/site-packages"))
    assert toolkit["root"] == str(site_packages / "nvidia" / "cu13"), toolkit
    assert toolkit["source"] == "NVIDIA's CUDA wheels in the Python environment", toolkit
    for component in ("ptxas", "fatbinary", "libdevice"):
        path = toolkit["components"][component]
        assert path and path.startswith(toolkit["root"]), (component, toolkit)


def hidden_cuda_toolkit(command):
    """`command` run where /usr/local/cuda is an empty folder (a mount
    namespace of its own), as on a machine without the CUDA toolkit."""
    mount = shutil.which("mount")
    script = f'{mount} --bind "$KILN_EMPTY" /usr/local/cuda && exec "$@"'
    return [shutil.which("unshare"), "--mount", "/bin/sh", "-c", script, "sh", *command]


def can_hide_the_cuda_toolkit():
    if None in (shutil.which("unshare"), shutil.which("mount")) or not pathlib.Path(
            "/usr/local/cuda").is_dir():
        return False
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
    return probe.returncode == 0


def test_the_cuda_extra_builds_and_runs_without_a_cuda_toolkit(cuda_install, tmp_path):
    if not can_hide_the_cuda_toolkit():
        pytest.skip("hiding /usr/local/cuda needs `unshare --mount` (root)")
    venv, env = cuda_install
    env = dict(env, KILN_EMPTY=str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    shown = run(hidden_cuda_toolkit([venv / "bin" / "kiln", "targets", "--json"]), env=env)
    assert "/nvidia/cu13" in json.loads(shown.stdout)["toolkit"]["root"]

    (tmp_path / "kernels.py").write_text(KERNELS)
    run(hidden_cuda_toolkit([venv / "bin" / "kiln", "build", "kernels.py", "--module", "kernels",
                             "-o", ".", "--arch", "8.0 9.0+PTX"]), cwd=tmp_path, env=env)
    ran = run([venv / "bin" / "python", "-c", RUN_BUILT_MODULE], cwd=tmp_path, env=env)
    assert "built module ran" in ran.stdout
    (tmp_path / "scaling.py").write_text(COMPILE_IN_PROCESS)
    ran = run(hidden_cuda_toolkit([venv / "bin" / "python", "scaling.py"]), cwd=tmp_path, env=env)
    assert "compiled in process and ran" in ran.stdout
