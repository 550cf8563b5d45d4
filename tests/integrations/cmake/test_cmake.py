"""Kiln in CMake builds, end to end (docs/cmake.md).

Installs Kiln from the build tree (KILN_BUILD_DIR, default build/) with
`cmake --install`, then builds project/ (a package with two kernel modules)
with find_package(Kiln CONFIG) + add_python_kernels under Ninja, installs it,
imports it and runs every kernel on the CPU engine against NumPy. Then builds
Kiln's wheel from the same build tree, installs it into a fresh virtual
environment offline (.venv/wheelhouse, filled by scripts/setup.sh), and builds
skbuild_project/ (scikit-build-core) there.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import pytest

from conftest import BUILD_DIR, REPO_ROOT

# Builds whole projects or runs benchmarks: `scripts/test.sh --quick` skips it.
pytestmark = pytest.mark.slow

HERE = pathlib.Path(__file__).resolve().parent
PYTHON_DIR = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
# The project builds stats.py for this CPython alone (PYTHON_ABI), the
# others for the stable ABI, as add_python_kernels does by default.
THIS_CPYTHON = "cp%d%d" % sys.version_info[:2]
STABLE_ABI_SUFFIX = ".abi3.so"
WHEELHOUSE = REPO_ROOT / ".venv" / "wheelhouse"


def run(*args, cwd=None, env=None, check=True):
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    if check and result.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, args))} exited with {result.returncode}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
    return result


def require_tools():
    for tool in ("cmake", "ninja"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    if not (BUILD_DIR / "build.ninja").is_file():
        pytest.fail(f"no Kiln build tree at {BUILD_DIR}; run scripts/setup.sh")


@pytest.fixture(scope="module")
def kiln_prefix(tmp_path_factory):
    """Kiln installed by `cmake --install` into a fresh prefix."""
    require_tools()
    prefix = tmp_path_factory.mktemp("kiln-prefix")
    # Configure again (a second): after a `pip install` that reused the tree,
    # its install rules are the wheel's until then.
    run("cmake", BUILD_DIR)
    run("cmake", "--install", BUILD_DIR, "--prefix", prefix)
    return prefix


@pytest.fixture(scope="module")
def project(tmp_path_factory, kiln_prefix):
    """project/ copied, configured against the installed Kiln and built."""
    root = tmp_path_factory.mktemp("cmake-project")
    source = root / "src"
    shutil.copytree(HERE / "project", source)
    build = root / "build"
    run(
        "cmake", "-S", source, "-B", build, "-G", "Ninja",
        f"-DCMAKE_PREFIX_PATH={kiln_prefix}",
        "-DCMAKE_CUDA_ARCHITECTURES=80-real",
        f"-DKILN_PYTHON_EXECUTABLE={sys.executable}",
        f"-DSTATS_PYTHON_ABI={THIS_CPYTHON}",
    )
    # blend.py's build imports it (its kernel reads a table host code
    # computes), with the Python given above: kiln must be importable there.
    env = runtime_env(kiln_prefix / PYTHON_DIR)
    first = run("ninja", "-C", build, env=env)
    return {"source": source, "build": build, "first": first.stdout, "root": root, "env": env}


def runtime_env(*paths):
    env = dict(os.environ, KILN_TARGET="cpu")
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
    return env


CHECK_MATHPKG = textwrap.dedent(
    """
    import numpy as np
    import kiln
    from mathpkg import saxpy, stats
    assert kiln.target() == "cpu"
    assert saxpy.SCALE == 2.0
    x = np.arange(1000, dtype=np.float32)
    y = np.linspace(0, 1, 1000, dtype=np.float32)
    out = np.empty_like(x)
    saxpy.saxpy[8, 128](np.float32(3), x, y, out)
    np.testing.assert_allclose(out, 3 * x + y, rtol=1e-6)
    d = np.linspace(-1, 1, 77)
    dout = np.empty_like(d)
    saxpy.scale[1, 128](d, dout)
    np.testing.assert_array_equal(dout, d * 2.0)
    sums = np.zeros(8, dtype=np.float32)
    stats.block_sums[8, 128](x, sums)
    np.testing.assert_allclose(sums, np.add.reduceat(x, np.arange(0, 1000, 128)), rtol=1e-6)
    import sys
    sys.modules["kiln._compiler"] = None   # the companion alone
    from mathpkg import blend
    assert blend.__file__.endswith("blend.py")
    np.testing.assert_allclose(blend.blended(d), 0.75 * d + 1.0)
    print(kiln.__file__)
    """
)


def test_install_layout(kiln_prefix):
    assert os.access(kiln_prefix / "bin" / "kiln", os.X_OK)
    assert (kiln_prefix / "share" / "man" / "man1" / "kiln.1").is_file(), "man kiln finds its page"
    cmake_dir = kiln_prefix / "lib" / "cmake" / "Kiln"
    for name in ("KilnConfig.cmake", "KilnConfigVersion.cmake", "AddPythonKernels.cmake"):
        assert (cmake_dir / name).is_file(), name
    package = kiln_prefix / PYTHON_DIR / "kiln"
    for name in ("__init__.py", "__main__.py", "_paths.py", "cuda/__init__.py", "_runtime" + STABLE_ABI_SUFFIX):
        assert (package / name).is_file(), name
    result = run(sys.executable, "-m", "kiln", "--cmake-dir", env=runtime_env(kiln_prefix / PYTHON_DIR))
    assert pathlib.Path(result.stdout.strip()) == cmake_dir
    result = run(sys.executable, "-m", "kiln", "--version", env=runtime_env(kiln_prefix / PYTHON_DIR))
    assert result.stdout.startswith("kiln ")


def test_build_install_import_run(project, kiln_prefix, tmp_path, kiln):
    assert "Building kernel module mathpkg.saxpy" in project["first"]
    assert "Building kernel module mathpkg.stats" in project["first"]
    build = project["build"]
    # Architectures: CMAKE_CUDA_ARCHITECTURES for saxpy, ARCHITECTURES "75;80" for stats.
    saxpy = build / "mathpkg" / f"saxpy{STABLE_ABI_SUFFIX}"
    stats = build / "mathpkg" / f"stats{EXT_SUFFIX}"  # PYTHON_ABI names this CPython
    saxpy_info = kiln("inspect", saxpy).stdout
    stats_info = kiln("inspect", stats).stdout
    assert "cubins sm_80; PTX none" in saxpy_info, saxpy_info  # 80-real: no PTX
    assert "cubins sm_75 sm_80; PTX compute_75 compute_80" in stats_info, stats_info
    assert "fastmath=true" in stats_info

    prefix = tmp_path / "prefix"
    run("cmake", "--install", build, "--prefix", prefix)
    blend = build / "mathpkg" / f"_blend.kiln{STABLE_ABI_SUFFIX}"
    assert "companion   of mathpkg.blend, built from blend.py" in kiln("inspect", blend).stdout
    assert sorted(p.name for p in (prefix / "mathpkg").iterdir()) == sorted(
        ["__init__.py", "blend.py", saxpy.name, stats.name, blend.name]
    )
    result = run(sys.executable, "-c", CHECK_MATHPKG,
                 env=runtime_env(kiln_prefix / PYTHON_DIR, prefix), cwd=tmp_path)
    # The installed runtime, not the build tree's.
    assert result.stdout.strip().startswith(str(kiln_prefix))


def test_rebuilds_only_what_changed(project):
    build = project["build"]
    assert "ninja: no work to do." in run("ninja", "-C", build, env=project["env"]).stdout
    stats = project["source"] / "mathpkg" / "stats.py"
    os.utime(stats)  # now: newer than the build's outputs
    output = run("ninja", "-C", build, env=project["env"]).stdout
    assert "Building kernel module mathpkg.stats" in output
    assert "mathpkg.saxpy" not in output and "saxpy" not in output, output
    assert "ninja: no work to do." in run("ninja", "-C", build, env=project["env"]).stdout


def test_find_package_through_python_m_kiln(kiln_prefix, tmp_path):
    cmake_dir = run(sys.executable, "-m", "kiln", "--cmake-dir",
                    env=runtime_env(kiln_prefix / PYTHON_DIR)).stdout.strip()
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent(
        """
        cmake_minimum_required(VERSION 3.20)
        project(probe LANGUAGES C)
        find_package(Kiln 0.1 CONFIG REQUIRED)
        get_target_property(location Kiln::kiln IMPORTED_LOCATION)
        message(STATUS "kiln at ${location}")
        add_python_kernels(k kernels.py)
        """
    ))
    (tmp_path / "kernels.py").write_text("from numba import cuda\n")
    result = run("cmake", "-S", tmp_path, "-B", tmp_path / "b", "-G", "Ninja", f"-DKiln_DIR={cmake_dir}")
    assert f"kiln at {kiln_prefix / 'bin' / 'kiln'}" in result.stdout


def test_pip_wheel_into_fresh_venv_and_scikit_build_core_project(tmp_path):
    """`pip install` of Kiln's wheel, then a scikit-build-core project using it.

    The wheel is built by .venv's pip from the shared build tree, so that it
    is incremental; the tree is configured back afterwards."""
    require_tools()
    if not list(WHEELHOUSE.glob("numpy-*.whl")) or not list(WHEELHOUSE.glob("scikit_build_core-*.whl")):
        pytest.fail(f"{WHEELHOUSE} lacks numpy or scikit-build-core; run scripts/setup.sh")
    dist = tmp_path / "dist"
    try:
        run(
            sys.executable, "-m", "pip", "wheel", REPO_ROOT, "--no-build-isolation", "--no-deps",
            "--no-index", "-w", dist, f"-Cbuild-dir={BUILD_DIR}",
            "-Ccmake.define.KILN_BUILD_TESTS=ON",
        )
    finally:
        # The tree's install rules are the wheel's until it is configured again.
        run("cmake", BUILD_DIR)
    (wheel,) = dist.glob("kiln_compiler-*.whl")

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
    offline = ["--no-index", "--find-links", dist, "--find-links", WHEELHOUSE]
    run(*pip, "install", "--quiet", *offline, "kiln-compiler", "scikit-build-core")

    python = venv / "bin" / "python"
    assert run(venv / "bin" / "kiln", "--version").stdout.startswith("kiln ")
    cmake_dir = pathlib.Path(run(python, "-m", "kiln", "--cmake-dir").stdout.strip())
    assert cmake_dir == venv / PYTHON_DIR / "kiln" / "cmake"
    assert (cmake_dir / "KilnConfig.cmake").is_file()

    project = tmp_path / "skbuild_project"
    shutil.copytree(HERE / "skbuild_project", project)
    # Only the build environment has Kiln's compiler; the package depends on
    # kiln-runtime, which the kiln wheel contains.
    run(*pip, "install", "--quiet", "--no-build-isolation", "--no-deps", *offline, project)
    check = textwrap.dedent(
        """
        import numpy as np
        from skpkg import kernels
        x = np.arange(-50, 50, dtype=np.int32)
        out = np.empty_like(x)
        kernels.square[1, 128](x, out)
        np.testing.assert_array_equal(out, x * x)
        print(kernels.__file__)
        """
    )
    env = dict(os.environ, KILN_TARGET="cpu")
    env.pop("PYTHONPATH", None)
    result = run(python, "-c", check, env=env, cwd=tmp_path)
    assert result.stdout.strip().startswith(str(venv / PYTHON_DIR / "skpkg" / "kernels"))



def test_kiln_runtime_wheel(tmp_path):
    """kiln-runtime (runtime/pyproject.toml, KILN_RUNTIME_ONLY): the runtime
    alone, built without LLVM or the CUDA toolkit."""
    require_tools()
    tree = tmp_path / "tree"
    run(
        sys.executable, "-m", "pip", "wheel", REPO_ROOT / "runtime", "--no-build-isolation",
        "--no-deps", "--no-index", "-w", tmp_path / "dist", f"-Cbuild-dir={tree}",
    )
    cache = (tree / "CMakeCache.txt").read_text()
    assert "KILN_RUNTIME_ONLY:BOOL=ON" in cache or "KILN_RUNTIME_ONLY:BOOL=TRUE" in cache
    assert "LLVM_DIR" not in cache and "CUDAToolkit" not in cache
    (wheel,) = (tmp_path / "dist").glob("kiln_runtime-*.whl")
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"kiln/__init__.py", "kiln/cuda/__init__.py", f"kiln/_runtime{STABLE_ABI_SUFFIX}"} <= names
    assert not [n for n in names if "cmake" in n or "scripts" in n or "__main__" in n
                or "setuptools" in n], sorted(names)
