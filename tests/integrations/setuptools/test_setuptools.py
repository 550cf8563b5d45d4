"""kiln.setuptools end to end: wheels built by `pip wheel`, `python -m build`
and `pip install .`, installed into a fresh virtual environment that has no
compiler (no kiln command, no Numba) and run on the CPU engine against NumPy;
`build_ext --inplace` and `-j`; a kernel with a type error failing the build
with Kiln's diagnostic.

Nothing reaches the network: builds use --no-build-isolation with this
virtual environment's setuptools, and the fresh environment installs from a
local wheelhouse (numpy from .venv/wheelhouse, which scripts/setup.sh fills,
and a kiln-runtime wheel made here from the build tree's kiln package).

projects/setup_py       kernel modules declared in setup.py (KernelModule)
projects/pyproject_only [tool.kiln] modules in pyproject.toml, no setup.py:
                        picked up by the setuptools.finalize_distribution_options
                        entry point, registered here by a kiln .dist-info as
                        an installed Kiln registers it
projects/broken         a kernel with a type error
"""

import base64
import functools
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import pytest

from checked_run import run_checked
from other_cpythons import cpython_environment

# Builds whole projects or runs benchmarks: `scripts/test.sh --quick` skips it.
pytestmark = pytest.mark.slow

HERE = pathlib.Path(__file__).resolve().parent
PROJECTS = HERE / "projects"
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
# A KernelModule is built for CPython's stable ABI unless it says otherwise.
MODULE_SUFFIX = ".abi3.so"


# --- the build environment ---------------------------------------------------

@pytest.fixture
def kiln_setuptools(build_dir):
    """kiln.setuptools of the build tree, imported without installing it."""
    sys.path.insert(0, str(build_dir / "python"))
    try:
        from kiln import setuptools as module
    finally:
        sys.path.pop(0)
    return module


@pytest.fixture(scope="module")
def kiln_binary(build_dir):
    binary = pathlib.Path(os.environ.get("KILN", build_dir / "driver" / "kiln"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"kiln is not built at {binary}; run scripts/setup.sh")
    return binary


@pytest.fixture(scope="module")
def hook_site(tmp_path_factory):
    """A sys.path folder holding what an installed Kiln registers with
    setuptools: the finalize_distribution_options entry point."""
    site = tmp_path_factory.mktemp("hook-site")
    info = site / "kiln_compiler-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kiln-compiler\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[setuptools.finalize_distribution_options]\n"
        "kiln = kiln.setuptools:finalize_distribution_options\n")
    return site


@pytest.fixture(scope="module")
def build_env(kiln_binary, build_dir, hook_site):
    """Environment for builds: kiln through $KILN, the kiln package (and its
    setuptools hook) importable."""
    env = dict(os.environ)
    env["KILN"] = str(kiln_binary)
    env["PYTHONPATH"] = os.pathsep.join([str(hook_site), str(build_dir / "python")])
    env.pop("CUDAARCHS", None)
    env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    """A copy of the test projects, so that builds leave the repository alone."""
    root = tmp_path_factory.mktemp("projects")
    for project in PROJECTS.iterdir():
        shutil.copytree(project, root / project.name,
                        ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "*.so"))
    return root


run = functools.partial(run_checked, timeout=600)


def pip_wheel(project, out, env):
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-index",
         "--no-deps", "-w", out, "."], project, env)
    wheels = sorted(pathlib.Path(out).glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


# --- a wheelhouse and a fresh virtual environment ----------------------------

def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_runtime_wheel(package, out):
    """kiln-runtime as a wheel, from the build tree's kiln package (what
    runtime/pyproject.toml builds, made here without a build): everything
    but the compiler's binding, for every CPython from 3.11 (kiln._runtime
    is built for the stable ABI)."""
    tag = "cp311-abi3"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    path = out / f"kiln_runtime-0.1.0-{tag}-{platform}.whl"
    files = {}
    for file in sorted(package.rglob("*")):
        if file.is_file() and "__pycache__" not in file.parts and not file.name.startswith("_compiler"):
            files["kiln/" + file.relative_to(package).as_posix()] = file.read_bytes()
    info = "kiln_runtime-0.1.0.dist-info"
    files[f"{info}/METADATA"] = (b"Metadata-Version: 2.1\nName: kiln-runtime\nVersion: 0.1.0\n"
                                 b"Requires-Dist: numpy\n")
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: kiln-tests\nRoot-Is-Purelib: "
                              f"false\nTag: {tag}-{platform}\n").encode()
    record = [_record_line(name, data) for name, data in files.items()]
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return path


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory, build_dir, repo_root):
    numpy_wheels = sorted((repo_root / ".venv" / "wheelhouse").glob("numpy-*.whl"))
    if not numpy_wheels:
        pytest.skip("no numpy wheel in .venv/wheelhouse (scripts/setup.sh downloads it)")
    house = tmp_path_factory.mktemp("wheelhouse")
    for wheel in numpy_wheels:
        shutil.copy(wheel, house)
    make_runtime_wheel(build_dir / "python" / "kiln", house)
    return house


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    """A new virtual environment: no kiln command, no Numba, no setuptools
    project on its path; pip from ensurepip (offline)."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", venv], None, None)
    return venv


def plain_env(**extra):
    """No kiln on PATH, no PYTHONPATH, no $KILN: what a user of the wheel has."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
           "KILN_TARGET": "cpu", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.update(extra)
    return env


RUN_EVERY_KERNEL = textwrap.dedent("""
    import importlib.util, os, shutil, sys
    import numpy as np
    import kiln

    assert shutil.which("kiln") is None, shutil.which("kiln")
    assert importlib.util.find_spec("numba") is None
    assert kiln.target() == "cpu"

    import demo, demo.kernels, demo.elementwise, demo2.kernels
    for module in (demo.kernels, demo.elementwise, demo2.kernels):
        assert module.__file__.endswith(".so"), module.__file__
    rng = np.random.default_rng(7)

    x = rng.random(1000, dtype=np.float32)
    y = rng.random(1000, dtype=np.float32)
    np.testing.assert_allclose(demo.scaled_sum(np.float32(2.5), x, y), 2.5 * x + y, rtol=1e-6)

    ints = np.arange(300, dtype=np.int32)
    demo.kernels.shift.forall(ints.size)(ints, np.int32(5))
    np.testing.assert_array_equal(ints, np.arange(300) + 5)
    floats = np.linspace(0, 1, 77)
    demo.kernels.shift.forall(floats.size)(floats, -0.5)
    np.testing.assert_allclose(floats, np.linspace(0, 1, 77) - 0.5)

    src = rng.random((33, 17), dtype=np.float32)
    dst = np.zeros((17, 33), dtype=np.float32)
    demo.kernels.transpose[(5, 3), (8, 8)](src, dst)
    np.testing.assert_array_equal(dst, src.T)

    a = rng.random(500)
    b = rng.random(500)
    np.testing.assert_allclose(demo.elementwise.hypot(a, b), np.hypot(a, b), rtol=1e-12)
    a32 = a.astype(np.float32)
    np.testing.assert_allclose(demo.elementwise.hypot(a32, np.float32(2)),
                               np.hypot(a32, 2), rtol=1e-6)
    values = np.arange(1, 1001, dtype=np.int64)
    assert demo.elementwise.total(values) == values.sum()
    assert abs(demo.elementwise.total(a) - a.sum()) < 1e-9

    c = rng.random(257)
    out = np.empty_like(c)
    demo2.kernels.cube.forall(c.size)(c, out)
    np.testing.assert_allclose(out, c ** 3)
    keys = rng.integers(0, 100, 999)
    bins = np.zeros(10, dtype=np.int64)
    demo2.kernels.histogram.forall(keys.size)(keys, bins)
    np.testing.assert_array_equal(bins, np.bincount(keys % 10, minlength=10) * 3)
    print("every kernel ran")
""")


# --- tests -------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheels(projects, build_env, tmp_path_factory):
    """Wheels of both projects: setup_py by `pip wheel`, pyproject_only by
    `python -m build` (sdist, then the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    setup_py = pip_wheel(projects / "setup_py", out / "setup_py", build_env)
    run([sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check",
         "--outdir", out / "pyproject_only", "."], projects / "pyproject_only", build_env)
    pyproject_only = sorted((out / "pyproject_only").glob("*.whl"))
    assert len(pyproject_only) == 1
    return {"setup_py": setup_py, "pyproject_only": pyproject_only[0], "dist": out}


def test_the_wheel_holds_the_built_modules_not_their_sources(wheels):
    with zipfile.ZipFile(wheels["setup_py"]) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read("kiln_demo-0.1.0.dist-info/METADATA").decode()
        tags = wheel.read("kiln_demo-0.1.0.dist-info/WHEEL").decode()
    assert f"demo/kernels{MODULE_SUFFIX}" in names
    assert f"demo/elementwise{MODULE_SUFFIX}" in names
    assert "demo/__init__.py" in names
    assert "demo/kernels.py" not in names and "demo/elementwise.py" not in names
    assert "Root-Is-Purelib: false" in tags and "py3-none-any" not in wheels["setup_py"].name
    # Only abi3 kernel modules: one wheel for every CPython.
    assert "-cp310-abi3-" in wheels["setup_py"].name and "Tag: cp310-abi3-" in tags
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")]
    assert requires == ["kiln-runtime"]


def test_the_pyproject_only_form_builds_from_its_sdist(wheels):
    sdists = list((wheels["dist"] / "pyproject_only").glob("*.tar.gz"))
    assert len(sdists) == 1
    import tarfile
    with tarfile.open(sdists[0]) as sdist:
        assert any(name.endswith("demo2/kernels.py") for name in sdist.getnames())
    with zipfile.ZipFile(wheels["pyproject_only"]) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read("kiln_demo2-0.2.0.dist-info/METADATA").decode()
    assert f"demo2/kernels{MODULE_SUFFIX}" in names and "demo2/kernels.py" not in names
    assert "Requires-Dist: kiln-runtime" in metadata


def test_the_modules_carry_the_requested_architectures(wheels, kiln_binary):
    result = subprocess.run([kiln_binary, "audit", wheels["setup_py"], "--json"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    import json
    report = json.loads(result.stdout)
    archs = {m["module"]: m["archs"] for m in report["modules"]}
    assert archs == {"demo.kernels": {"cubins": [75, 80], "ptx": [75, 80]},
                     "demo.elementwise": {"cubins": [80, 90], "ptx": [90]}}


def test_a_fresh_venv_without_a_compiler_runs_every_kernel(wheels, wheelhouse, fresh_venv,
                                                           tmp_path):
    python = fresh_venv / "bin" / "python"
    run([python, "-m", "pip", "install", "--no-index", "--find-links", wheelhouse,
         wheels["setup_py"], wheels["pyproject_only"]], tmp_path, plain_env())
    listed = run([python, "-m", "pip", "list", "--format=freeze"], tmp_path, plain_env()).stdout
    installed = {line.split("==")[0].lower() for line in listed.split()}
    assert {"kiln-demo", "kiln-demo2", "kiln-runtime", "numpy"} <= installed
    assert not installed & {"numba", "setuptools-scm", "kiln"}
    result = run([python, "-c", RUN_EVERY_KERNEL], tmp_path, plain_env())
    assert "every kernel ran" in result.stdout


@pytest.mark.parametrize("minor", [12, 13])
def test_the_same_wheels_run_every_kernel_on_later_cpythons(minor, wheels, wheelhouse,
                                                          tmp_path):
    """What cibuildwheel does with abi3 wheels: built once (here, by this
    CPython), installed and tested on every later one."""
    python = cpython_environment(minor, wheelhouse, tmp_path)
    run([python, "-m", "pip", "install", "--no-index", "--find-links", wheelhouse,
         wheels["setup_py"], wheels["pyproject_only"]], tmp_path, plain_env())
    result = run([python, "-c", RUN_EVERY_KERNEL], tmp_path, plain_env())
    assert "every kernel ran" in result.stdout


def test_pip_install_dot(projects, build_env, tmp_path):
    target = tmp_path / "target"
    run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
         "--no-deps", "--target", target, "."], projects / "pyproject_only", build_env)
    assert (target / "demo2" / f"kernels{MODULE_SUFFIX}").is_file()
    assert not (target / "demo2" / "kernels.py").exists()
    env = dict(build_env, KILN_TARGET="cpu",
               PYTHONPATH=os.pathsep.join([str(target), build_env["PYTHONPATH"]]))
    script = ("import numpy as np, demo2.kernels as k\n"
              "x = np.arange(10.0); out = np.empty_like(x)\n"
              "k.cube.forall(x.size)(x, out); assert (out == x ** 3).all(), out\n"
              "print(k.__file__)\n")
    result = run([sys.executable, "-c", script], tmp_path, env)
    assert result.stdout.strip().startswith(str(target))


def test_build_ext_inplace_and_parallel(projects, build_env, tmp_path):
    project = tmp_path / "setup_py"
    shutil.copytree(projects / "setup_py", project,
                    ignore=shutil.ignore_patterns("build", "dist", "*.egg-info"))
    result = run([sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"], project,
                 build_env)
    assert "building kernel module 'demo.kernels'" in result.stdout + result.stderr
    assert "building kernel module 'demo.elementwise'" in result.stdout + result.stderr
    assert (project / "demo" / f"kernels{MODULE_SUFFIX}").is_file()
    assert (project / "demo" / f"elementwise{MODULE_SUFFIX}").is_file()
    # In place, the sources stay (they are the project's own files).
    assert (project / "demo" / "kernels.py").is_file()
    env = dict(build_env, KILN_TARGET="cpu",
               PYTHONPATH=os.pathsep.join([str(project), build_env["PYTHONPATH"]]))
    script = ("import numpy as np, demo, demo.kernels, demo.elementwise as e\n"
              "assert demo.kernels.__file__.endswith('.so')\n"
              "x = np.arange(8, dtype=np.float32)\n"
              "assert (demo.scaled_sum(np.float32(2), x, x) == 3 * x).all()\n"
              "assert e.total(np.arange(10)) == 45\n")
    run([sys.executable, "-c", script], tmp_path, env)


def test_a_type_error_fails_the_build_with_kilns_diagnostic(projects, build_env, tmp_path):
    result = run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-index",
                  "--no-deps", "-w", tmp_path, "."], projects / "broken", build_env, check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "bad/kernels.py:8:18: error: operator '+' is not supported between float32 and none" \
        in output
    assert "note: in kernel 'add_none'" in output
    assert "kiln could not build kernel module 'bad.kernels'" in output
    assert "Traceback" not in output
    assert not list(tmp_path.glob("*.whl"))

    direct = run([sys.executable, "setup.py", "-q", "build_ext"], projects / "broken", build_env,
                 check=False)
    assert direct.returncode == 1
    assert "error: operator '+' is not supported" in direct.stderr
    assert "Traceback" not in direct.stderr


def test_the_kiln_command_is_found_through_KILN_then_PATH_then_beside_python(
        monkeypatch, tmp_path, kiln_setuptools):
    fake = tmp_path / "bin" / "kiln"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("KILN", str(fake))
    assert kiln_setuptools.find_kiln() == str(fake)
    monkeypatch.delenv("KILN")
    monkeypatch.setenv("PATH", str(fake.parent))
    assert kiln_setuptools.find_kiln() == str(fake)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    monkeypatch.setattr(sys, "executable", str(fake.parent / "python"))
    assert kiln_setuptools.find_kiln() == str(fake)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(Exception, match="cannot find the kiln command"):
        kiln_setuptools.find_kiln()


def test_tool_kiln_modules_are_checked(tmp_path, kiln_setuptools):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.kiln]\narchs = "80"\nmodules = [\n'
                         '  {name = "p.k", source = "p/k.py"},\n'
                         '  {name = "p.j", source = "p/j.py", archs = ["75", "86"], '
                         'options = ["--fastmath"], include-sources = true},\n]\n')
    first, second = kiln_setuptools.kernel_modules(str(pyproject))
    assert (first.name, first.kiln_source, first.kiln_archs, first.include_sources) == \
        ("p.k", "p/k.py", "80", False)
    assert (second.kiln_archs, second.kiln_options, second.include_sources) == \
        ("75;86", ["--fastmath"], True)
    pyproject.write_text('[tool.kiln]\nmodules = [{name = "p.k", sauce = "p/k.py"}]\n')
    with pytest.raises(Exception, match=r"modules\[0\] needs name and source"):
        kiln_setuptools.kernel_modules(str(pyproject))
    assert kiln_setuptools.kernel_modules(str(tmp_path / "missing.toml")) == []


def test_a_declared_module_that_ends_up_not_compiled_fails_the_build_naming_it(
        monkeypatch, tmp_path, kiln_setuptools):
    """A kiln that exits 0 without writing the module (another project's
    `kiln` on PATH) must not give a wheel without kernels."""
    from setuptools import Distribution
    from setuptools.errors import CompileError
    impostor = tmp_path / "kiln"
    impostor.write_text("#!/bin/sh\necho 'kiln 0.1: templates rendered'\n")
    impostor.chmod(0o755)
    monkeypatch.setenv("KILN", str(impostor))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "kernels.py").write_text("from numba import cuda\n")
    monkeypatch.chdir(tmp_path)
    distribution = Distribution({"ext_modules": [kiln_setuptools.KernelModule(
        "pkg.kernels", "pkg/kernels.py")]})
    command = kiln_setuptools.build_ext(distribution)
    command.ensure_finalized()
    command.build_lib = str(tmp_path / "out")
    with pytest.raises(CompileError, match=r"kernel module 'pkg.kernels' was declared but not "
                                           r"compiled: .*kiln did not write .*kernels"):
        command.build_extension(distribution.ext_modules[0])


def test_tool_kiln_archs_are_left_to_kiln_build_so_that_cudaarchs_overrides_them(
        tmp_path, kiln_setuptools):
    from setuptools import Distribution
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.kiln]\narchs = "80"\nmodules = [{name = "p.k", source = "p/k.py"}]\n')
    command = kiln_setuptools.build_ext(Distribution())
    command.parallel, command.debug = None, 0
    command.distribution.src_root = str(tmp_path)
    (configured,) = kiln_setuptools.kernel_modules(str(pyproject))
    assert "--arch" not in command._kiln_command(configured, "out", ".so"), (
        "[tool.kiln] archs went to kiln build as --arch, above $CUDAARCHS")
    explicit = kiln_setuptools.KernelModule("p.k", "p/k.py", archs="75;90")
    line = command._kiln_command(explicit, "out", ".so")
    assert line[line.index("--arch") + 1] == "75;90", line


def test_tool_kiln_remote_cache_reaches_every_build_unless_the_environment_names_one(
        monkeypatch, tmp_path, kiln_setuptools):
    from setuptools import Distribution
    (tmp_path / "pyproject.toml").write_text(
        '[tool.kiln]\nremote-cache = ["redis://cache:6379|read-only", "http://b/kiln"]\n')
    command = kiln_setuptools.build_ext(Distribution())
    command.parallel, command.debug = None, 0
    command.distribution.src_root = str(tmp_path)
    module = kiln_setuptools.KernelModule("p.k", "p/k.py")
    monkeypatch.delenv("KILN_REMOTE_CACHE", raising=False)
    line = command._kiln_command(module, "out", ".so")
    assert line[-4:] == ["--remote-cache", "redis://cache:6379|read-only",
                         "--remote-cache", "http://b/kiln"], line
    monkeypatch.setenv("KILN_REMOTE_CACHE", "redis://other")
    assert "--remote-cache" not in command._kiln_command(module, "out", ".so"), (
        "[tool.kiln] remote-cache overrode $KILN_REMOTE_CACHE")
    (tmp_path / "pyproject.toml").write_text('[tool.kiln]\nremote-cache = 6379\n')
    with pytest.raises(Exception, match="remote-cache must be a string or a list"):
        kiln_setuptools.remote_caches(str(tmp_path / "pyproject.toml"))


def test_a_kernel_module_is_built_for_the_stable_abi_unless_it_asks_for_this_python(
        kiln_setuptools):
    from setuptools import Distribution
    stable = kiln_setuptools.KernelModule("p.stable", "p/stable.py")
    versioned = kiln_setuptools.KernelModule("p.versioned", "p/versioned.py", py_limited_api=False)
    command = kiln_setuptools.build_ext(Distribution({"ext_modules": [stable, versioned]}))
    command.ensure_finalized()
    assert command.get_ext_filename("p.stable").endswith("stable" + MODULE_SUFFIX)
    assert command.get_ext_filename("p.versioned").endswith("versioned" + EXT_SUFFIX)


def test_only_abi3_kernel_modules_make_a_wheel_for_every_cpython(kiln_setuptools):
    from setuptools import Distribution, Extension

    def wheel_tag_option(*extensions):
        dist = Distribution({"ext_modules": list(extensions)})
        kiln_setuptools.finalize_distribution_options(dist)
        return dist.get_option_dict("bdist_wheel").get("py_limited_api")

    stable = kiln_setuptools.KernelModule("p.k", "p/k.py")
    assert wheel_tag_option(stable) == ("kiln.setuptools", "cp310")
    assert wheel_tag_option(stable, kiln_setuptools.KernelModule(
        "p.v", "p/v.py", py_limited_api=False)) is None
    assert wheel_tag_option(stable, Extension("p.c", ["p/c.c"])) is None


def test_kiln_build_records_paths_relative_to_the_project_folder(tmp_path, kiln_setuptools):
    """--project-root is the folder of setup.py (src_root, else the current
    folder), so that wheels of any checkout hold the same modules
    (tests/reproducibility/test_packages.py builds them)."""
    from setuptools import Distribution
    command = kiln_setuptools.build_ext(Distribution())
    command.parallel, command.debug = None, 0
    command.distribution.src_root = str(tmp_path / "project" / ".." / "project")
    line = command._kiln_command(kiln_setuptools.KernelModule("p.k", "p/k.py"), "out", ".so")
    assert line[line.index("--project-root") + 1] == str(tmp_path / "project"), line


def test_tool_kiln_through_a_two_line_setup_py_without_the_hook(projects, build_env, tmp_path,
                                                                 build_dir):
    """Where Kiln is not installed as a distribution (no entry point), the
    [tool.kiln] modules are read by kernel_modules() in a minimal setup.py."""
    project = tmp_path / "pyproject_only"
    shutil.copytree(projects / "pyproject_only", project,
                    ignore=shutil.ignore_patterns("build", "dist", "*.egg-info"))
    (project / "setup.py").write_text(
        "from setuptools import setup\n"
        "from kiln.setuptools import build_ext, kernel_modules\n"
        "setup(ext_modules=kernel_modules(), cmdclass={'build_ext': build_ext})\n")
    env = dict(build_env, PYTHONPATH=str(build_dir / "python"))  # no hook
    wheel = pip_wheel(project, tmp_path / "dist", env)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert f"demo2/kernels{MODULE_SUFFIX}" in names and "demo2/kernels.py" not in names


RUN_PACKAGE_TESTS = textwrap.dedent("""
    import importlib.util, shutil, sys
    assert shutil.which("kiln") is None, shutil.which("kiln")
    assert importlib.util.find_spec("kiln._compiler") is None, "kiln-runtime alone has no compiler"
    import ordinary.ops
    assert ordinary.ops.__file__.endswith("ops.py"), ordinary.ops.__file__
    sys.path.insert(0, "tests")
    import test_ops
    names = sorted(name for name in dir(test_ops) if name.startswith("test_"))
    for name in names:
        getattr(test_ops, name)()
    print("passed:", " ".join(names))
""")


def test_an_ordinary_module_goes_from_recorded_tests_to_a_wheel_without_a_compiler(
        projects, build_env, wheelhouse, fresh_venv, tmp_path):
    project = projects / "ordinary"
    development = dict(build_env, KILN_TARGET="cpu",
                       PYTHONPATH=os.pathsep.join([str(project), build_env["PYTHONPATH"]]))
    run([sys.executable, "-m", "pytest", "-q", "-p", "kiln.pytest_plugin", "--kiln-record",
         "-p", "no:cacheprovider", "tests"], project, development)
    recorded = (project / "kiln-signatures.toml").read_text()
    for line in ('"ordinary.ops.blur" = [', '"void(float32[::1], float32[::1])",',
                 '"void(float64[::1], float64[::1])",', '"ordinary.ops.mix" = [',
                 '"void(float64[::1], float64[::1], float64[::1], float64)",',
                 '"ordinary.ops.gain_plus_half" = [', '"void(float64[::1], float64[::1])",'):
        assert line in recorded, f"the test run did not record {line}:\n{recorded}"

    wheel = pip_wheel(project, tmp_path / "dist", build_env)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"ordinary/ops.py", "ordinary/constants.py", f"ordinary/_ops.kiln{MODULE_SUFFIX}"} <= names
    assert f"ordinary/ops{MODULE_SUFFIX}" not in names
    audit = run([build_env["KILN"], "audit", wheel, "--signatures", project / "kiln-signatures.toml"],
                tmp_path, build_env)
    assert "companion of ordinary.ops, built from 2 source files, all unchanged" in audit.stdout

    python = fresh_venv / "bin" / "python"
    run([python, "-m", "pip", "install", "--no-index", "--find-links", wheelhouse, wheel],
        tmp_path, plain_env())
    shutil.copytree(project / "tests", tmp_path / "tests")
    result = run([python, "-c", RUN_PACKAGE_TESTS], tmp_path, plain_env())
    assert result.stdout.split() == ["passed:", "test_blur_float32", "test_blur_float64", "test_gained",
                                     "test_mix"]
