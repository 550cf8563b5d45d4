"""Kiln's conda recipes (conda-recipe/, docs/conda.md), exercised without conda.

conda-build cannot be installed here, so this does what it would, step by step:

1. renders meta.yaml as conda-build does (selectors, then Jinja with stand-ins
   for compiler(), stdlib(), pin_subpackage(), pin_compatible()), parses the
   YAML and checks the sections, the outputs and their run_exports;
2. runs the recipe's build.sh and each output's install script with the
   variables conda-build sets (PREFIX, BUILD_PREFIX, SRC_DIR, RECIPE_DIR,
   PYTHON, SP_DIR, CONDA_BUILD=1, PKG_NAME, PKG_VERSION, CPU_COUNT...), each
   into a scratch prefix holding its host requirements (kiln's holds
   kiln-runtime), reusing the build tree scripts/setup.sh built
   (KILN_BUILD_DIR) instead of compiling Kiln again;
3. packs what each script added into a .conda file with
   conda-package-handling, with the info/ folder conda reads (index.json,
   files, paths.json, run_exports.json);
4. builds the example downstream recipe (examples/vecmath) as conda-build
   would: kiln's prefix as BUILD_PREFIX, its activation scripts sourced after
   cuda-nvcc's CUDAARCHS, a host prefix with Python and kiln-runtime (from
   kiln's run_exports); packs it, audits it with `kiln audit`, installs
   kiln-runtime and it into a fresh prefix (extracted, as conda would) and
   runs its kernel on the CPU engine.
"""

import functools
import hashlib
import json
import os
import pathlib
import re
import shutil
import sys
import textwrap
import time

import pytest

from checked_run import run_checked
from conftest import BUILD_DIR, REPO_ROOT

# Builds whole projects or runs benchmarks: `scripts/test.sh --quick` skips it.
pytestmark = pytest.mark.slow

yaml = pytest.importorskip("yaml", reason="pyyaml is in requirements-dev.txt")
jinja2 = pytest.importorskip("jinja2", reason="jinja2 is in requirements-dev.txt")
cph = pytest.importorskip("conda_package_handling.api",
                          reason="conda-package-handling is in requirements-dev.txt")

RECIPE = REPO_ROOT / "conda-recipe"
EXAMPLE = RECIPE / "examples" / "vecmath"
PY_VER = f"{sys.version_info.major}.{sys.version_info.minor}"
SP_REL = f"lib/python{PY_VER}/site-packages"
KILN_BINARY = BUILD_DIR / "driver" / "kiln"

# What cuda-nvcc 13's activation script sets CUDAARCHS to in conda-build
# (conda-forge/cuda-nvcc-feedstock, recipe/conda_build_config.yaml), and
# what Kiln's activation script makes of it.
NVCC_CUDAARCHS = ("75-real;80-real;86-real;87-real;89-real;90a-real;100f-real;103f-real;"
                  "110-real;120a-real;121f-real;121-virtual")
KILN_CUDAARCHS = ("75-real;80-real;86-real;87-real;89-real;90-real;100-real;103-real;"
                  "110-real;120-real;121-real;90-virtual")


run = functools.partial(run_checked, timeout=300)


# --- rendering recipes as conda-build does ------------------------------------

VARIANT = {
    "linux": True, "linux64": True, "x86_64": True, "unix": True,
    "win": False, "osx": False, "aarch64": False,
    "target_platform": "linux-64", "build_platform": "linux-64",
    "py": sys.version_info.major * 100 + sys.version_info.minor,
    "python": PY_VER, "cuda_compiler_version": "13.0", "cuda_compiler": "cuda-nvcc",
}


def apply_selectors(text, variant):
    """Drops the lines whose `# [expr]` selector is false, as conda-build
    does before rendering Jinja."""
    kept = []
    for line in text.splitlines():
        match = re.search(r"#\s*\[(.+)\]\s*$", line)
        if match:
            if not eval(match.group(1), {}, dict(variant)):  # noqa: S307 (our recipe)
                continue
            line = line[:match.start()].rstrip()
        kept.append(line)
    return "\n".join(kept) + "\n"


def _upper_bound(version, max_pin):
    parts = [int(p) for p in version.split(".")]
    n = max_pin.count("x")
    bumped = parts[:n - 1] + [parts[n - 1] + 1]
    return ".".join(map(str, bumped)) + ".0a0" if n > 1 else f"{bumped[0]}.0a0"


def render(meta, variant=VARIANT):
    """meta.yaml rendered as a dict, with stand-ins for conda-build's Jinja
    functions (pins computed from the recipe's version and the variant)."""
    text = apply_selectors(meta.read_text(), variant)
    match = re.search(r'{%\s*set\s+version\s*=\s*"([^"]+)"\s*%}', text)
    version = match.group(1) if match else "0"

    def compiler(language):
        default = f"{language}_compiler_stub"
        return f"{variant.get(language + '_compiler', default)}_{variant['target_platform']}"

    def stdlib(language):
        return f"sysroot_{variant['target_platform']}"

    def pin_subpackage(name, max_pin="x.x.x.x.x.x", exact=False, min_pin=None):
        if exact:
            return f"{name} =={version}"
        return f"{name} >={version},<{_upper_bound(version, max_pin)}"

    def pin_compatible(name, min_pin="x.x.x.x.x.x", max_pin="x", exact=False):
        assert name == "cuda-version", name  # the only host package the recipes pin
        host = variant["cuda_compiler_version"]
        if not host[0].isdigit():  # "None": a skipped variant
            return name
        return f"{name} >={host},<{_upper_bound(host, max_pin)}"

    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    rendered = environment.from_string(text).render(
        compiler=compiler, stdlib=stdlib, pin_subpackage=pin_subpackage,
        pin_compatible=pin_compatible, environ=os.environ, **variant)
    return yaml.safe_load(rendered)


def names(requirements):
    return [r.split()[0] for r in requirements or []]


@pytest.fixture(scope="module")
def kiln_recipe():
    return render(RECIPE / "meta.yaml")


@pytest.fixture(scope="module")
def example_recipe():
    return render(EXAMPLE / "meta.yaml")


def outputs_by_name(recipe):
    return {output["name"]: output for output in recipe["outputs"]}


def test_recipe_sections(kiln_recipe):
    for section in ("package", "source", "build", "requirements", "outputs", "about"):
        assert kiln_recipe.get(section), section
    project_version = re.search(r'^version = "(.+)"', (REPO_ROOT / "pyproject.toml").read_text(), re.M)
    assert kiln_recipe["package"]["version"] == project_version.group(1)
    assert (RECIPE / kiln_recipe["source"]["path"] / "CMakeLists.txt").is_file()
    assert kiln_recipe["build"]["number"] == 0 and "skip" not in kiln_recipe["build"]
    build = kiln_recipe["requirements"]["build"]
    assert {"c_compiler_stub_linux-64", "cxx_compiler_stub_linux-64", "sysroot_linux-64",
            "cuda-nvcc_linux-64", "cuda-nvvm", "cmake", "ninja"} <= set(names(build)), build
    host = kiln_recipe["requirements"]["host"]
    assert "cuda-version 13.0" in host and "llvmdev 19.*" in host, host

    outputs = outputs_by_name(kiln_recipe)
    assert list(outputs) == ["kiln-runtime", "kiln-compiler"]
    for output in outputs.values():
        assert output.get("test") and (output["test"].get("commands") or output["test"].get("imports"))
        assert output.get("about", {}).get("summary")
        assert (RECIPE / output["script"]).is_file(), output["script"]
    runtime, kiln = outputs["kiln-runtime"], outputs["kiln-compiler"]
    assert "kiln-runtime ==0.1.0" in kiln["requirements"]["run"]
    # Packages that list kiln (in build) get kiln-runtime at run time.
    assert kiln["build"]["run_exports"]["strong"] == ["kiln-runtime >=0.1.0,<0.2.0a0"]
    assert runtime["build"]["run_exports"] == ["kiln-runtime >=0.1.0,<0.2.0a0"]
    assert "numpy" in names(runtime["requirements"]["run"])
    assert not {"cuda-nvcc-tools", "llvmdev", "kiln-compiler"} & set(names(runtime["requirements"]["run"]))
    assert {"cuda-nvcc-tools", "cuda-nvvm-tools", "libnvjitlink", "cuda-version"} <= set(
        names(kiln["requirements"]["run"]))


def test_recipe_skips_other_platforms():
    windows = dict(VARIANT, linux=False, linux64=False, unix=False, win=True, target_platform="win-64")
    assert render(RECIPE / "meta.yaml", windows)["build"]["skip"] is True
    no_cuda = dict(VARIANT, cuda_compiler_version="None")
    assert render(RECIPE / "meta.yaml", no_cuda)["build"]["skip"] is True


def test_example_recipe_sections(example_recipe):
    for section in ("package", "source", "build", "requirements", "test", "about"):
        assert example_recipe.get(section), section
    requirements = example_recipe["requirements"]
    assert "kiln-compiler" in names(requirements["build"])
    assert "cuda-nvcc_linux-64" in names(requirements["build"])
    # kiln-runtime comes from kiln's run_exports, not from the recipe.
    assert "kiln-runtime" not in names(requirements["run"]) + names(requirements["host"])
    assert (EXAMPLE / example_recipe["source"]["path"] / "pyproject.toml").is_file()


# --- activation ---------------------------------------------------------------

def activate(cudaarchs=None, conda_build="1", extra="", **env_vars):
    env = {k: v for k, v in os.environ.items() if k not in ("CUDAARCHS", "CMAKE_ARGS")}
    env.update(CONDA_BUILD=conda_build, CONDA_PREFIX="/opt/build-prefix", **env_vars)
    if cudaarchs is not None:
        env["CUDAARCHS"] = cudaarchs
    script = textwrap.dedent(f"""\
        set -euo pipefail
        source {RECIPE / 'activate.sh'} >/dev/null
        echo "${{CUDAARCHS-<unset>}}|${{CMAKE_ARGS-<unset>}}"
        {extra}
        source {RECIPE / 'deactivate.sh'}
        echo "${{CUDAARCHS-<unset>}}|${{CMAKE_ARGS-<unset>}}|${{KILN_CUDAARCHS_BACKUP-none}}"
        """)
    lines = run(["bash", "-c", script], env=env).stdout.splitlines()
    active, restored = lines[0].split("|"), lines[-1].split("|")
    return active, restored


@pytest.mark.parametrize("given, expected", [
    (NVCC_CUDAARCHS, KILN_CUDAARCHS),
    # cuda-nvcc 12.9's list: what CUDA 12 builds, Kiln judges (sm_50 ... sm_70).
    ("50-real;60-real;70-real;75-real;80-real;90a-real;100f-real;120a-real;121-virtual",
     "50-real;60-real;70-real;75-real;80-real;90-real;100-real;120-real;90-virtual"),
    ("75;80;90", "75;80;90"),
    ("80;100", "80;100-real;90-virtual"),
    ("90a", "90"),
    ("all-major", "all-major"),
])
def test_activation_rewrites_cudaarchs_for_kiln(given, expected, kiln):
    active, restored = activate(given)
    assert active[0] == expected
    assert active[1] == "-DKiln_DIR=/opt/build-prefix/lib/cmake/Kiln"
    assert restored == [given, "<unset>", "none"]
    if "50-real" not in expected:  # needs a CUDA 12 toolkit
        result = kiln("targets", "--arch", expected)
        assert result.returncode == 0, result.stderr


def test_activation_leaves_other_cases_alone():
    # Unset: Kiln's default (conda-forge's set) applies.
    assert activate(None)[0][0] == "<unset>"
    # Outside conda-build, as cuda-nvcc's: nothing.
    assert activate(NVCC_CUDAARCHS, conda_build="0")[0] == [NVCC_CUDAARCHS, "<unset>"]
    # Opted out.
    assert activate(NVCC_CUDAARCHS, KILN_KEEP_CUDAARCHS="1")[0][0] == NVCC_CUDAARCHS
    # CMAKE_ARGS is extended and restored.
    active, restored = activate("80", CMAKE_ARGS="-DFOO=1")
    assert active[1] == "-DFOO=1 -DKiln_DIR=/opt/build-prefix/lib/cmake/Kiln"
    assert restored[1] == "-DFOO=1"


SCRIPTS = ("build.sh", "install-kiln-runtime.sh", "install-kiln-compiler.sh", "activate.sh",
           "deactivate.sh", "kiln_install_common.sh", "examples/vecmath/build.sh")


def test_scripts_parse():
    """Also the part of build.sh the tests below skip (building from source)."""
    for script in SCRIPTS:
        run(["bash", "-n", RECIPE / script])
    if shutil.which("shellcheck"):
        run(["shellcheck", "-x", "-P", "SCRIPTDIR", *SCRIPTS], cwd=RECIPE)


# --- building the outputs as conda-build would --------------------------------

def snapshot(prefix):
    return {p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file() or p.is_symlink()}


def conda_build_env(recipe_dir, src_dir, prefix, build_prefix, pkg_name, pkg_version, python, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDAARCHS", "CMAKE_ARGS", "PYTHONPATH", "VIRTUAL_ENV", "KILN")}
    env.update(
        CONDA_BUILD="1", PREFIX=str(prefix), BUILD_PREFIX=str(build_prefix),
        SRC_DIR=str(src_dir), RECIPE_DIR=str(recipe_dir), PYTHON=str(python),
        SP_DIR=str(prefix / SP_REL), STDLIB_DIR=str(prefix / f"lib/python{PY_VER}"),
        PY_VER=PY_VER, PKG_NAME=pkg_name, PKG_VERSION=pkg_version, PKG_BUILDNUM="0",
        CPU_COUNT="2", target_platform="linux-64", CONDA_PREFIX=str(build_prefix),
        PATH=os.pathsep.join([str(build_prefix / "bin"), str(prefix / "bin"), os.environ["PATH"]]),
        PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1",
    )
    env.update(extra)
    return env


def write_info(prefix, files, name, version, depends, run_exports=None, summary=""):
    """The info/ folder conda reads, for `files` (relative to prefix)."""
    info = prefix / "info"
    if info.exists():
        shutil.rmtree(info)
    info.mkdir()
    paths = []
    for rel in sorted(files):
        path = prefix / rel
        data = path.read_bytes()
        paths.append({"_path": rel, "path_type": "hardlink",
                      "sha256": hashlib.sha256(data).hexdigest(), "size_in_bytes": len(data)})
    build = f"py{PY_VER.replace('.', '')}_0"
    index = {"name": name, "version": version, "build": build, "build_number": 0,
             "depends": sorted(depends), "arch": "x86_64", "platform": "linux",
             "subdir": "linux-64", "license": "LicenseRef-Kiln",
             "timestamp": int(time.time() * 1000)}
    (info / "index.json").write_text(json.dumps(index, indent=2, sort_keys=True))
    (info / "files").write_text("".join(f"{rel}\n" for rel in sorted(files)))
    (info / "paths.json").write_text(json.dumps({"paths": paths, "paths_version": 1}, indent=2))
    (info / "about.json").write_text(json.dumps({"summary": summary}))
    if run_exports:
        (info / "run_exports.json").write_text(json.dumps(run_exports))
    return f"{name}-{version}-{build}", [f"info/{p.name}" for p in info.iterdir()]


def pack(prefix, files, out_dir, **info):
    stem, info_files = write_info(prefix, files, **info)
    cph.create(str(prefix), sorted(files) + sorted(info_files), f"{stem}.conda", str(out_dir))
    package = out_dir / f"{stem}.conda"
    assert package.is_file()
    return package


def conda_install(package, prefix):
    """What conda does with a package's files: extracts them into the prefix."""
    staging = prefix.parent / f".{package.stem}"
    cph.extract(str(package), str(staging))
    for rel in (staging / "info" / "files").read_text().splitlines():
        target = prefix / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(staging / rel, target)
    return json.loads((staging / "info" / "index.json").read_text())


@pytest.fixture(scope="module")
def kiln_packages(tmp_path_factory, kiln_recipe):
    """Runs build.sh, then each output's script into its own prefix, and
    packs the results. The kiln output's prefix holds kiln-runtime (its host
    requirement) first, so only the compiler's files are new there."""
    if not (BUILD_DIR / "build.ninja").is_file() or not os.access(KILN_BINARY, os.X_OK):
        pytest.fail(f"no Kiln build tree at {BUILD_DIR}; run scripts/setup.sh")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    root = tmp_path_factory.mktemp("conda-kiln")
    dist = root / "dist"
    dist.mkdir()
    work = root / "work"
    work.mkdir()
    outputs = outputs_by_name(kiln_recipe)
    version = kiln_recipe["package"]["version"]
    result = {"dist": dist, "recipe": kiln_recipe}

    def env_for(prefix, name):
        # SRC_DIR: conda-build's copy of the source; the tree is KILN_BUILD_DIR's.
        return conda_build_env(RECIPE, REPO_ROOT, prefix, root / "build-prefix", name, version,
                               sys.executable, KILN_BUILD_DIR=str(BUILD_DIR))

    top = root / "top-prefix"
    top.mkdir()
    run(["bash", RECIPE / "build.sh"], env=env_for(top, "kiln-split"), cwd=work)

    for name in ("kiln-runtime", "kiln-compiler"):
        output = outputs[name]
        prefix = root / f"{name}-prefix"
        (prefix / SP_REL).mkdir(parents=True)
        if name == "kiln-compiler":
            conda_install(result["kiln-runtime"], prefix)  # host: kiln-runtime
        before = snapshot(prefix)
        log = run(["bash", RECIPE / output["script"]], env=env_for(prefix, name), cwd=work)
        files = snapshot(prefix) - before
        run_exports = output["build"]["run_exports"]
        if isinstance(run_exports, list):
            run_exports = {"weak": run_exports}
        result[name] = pack(prefix, files, dist, name=name, version=version,
                            depends=output["requirements"]["run"], run_exports=run_exports,
                            summary=output["about"]["summary"])
        result[f"{name}-prefix"] = prefix
        result[f"{name}-files"] = files
        result[f"{name}-log"] = log.stdout + log.stderr
    return result


def test_runtime_package(kiln_packages):
    files = kiln_packages["kiln-runtime-files"]
    package = f"{SP_REL}/kiln"
    ext_suffix = next(f for f in files if "/_runtime." in f).rsplit("/_runtime", 1)[1]
    assert {f"{package}/__init__.py", f"{package}/cuda/__init__.py",
            f"{package}/_runtime{ext_suffix}",
            f"{SP_REL}/kiln_runtime-0.1.0.dist-info/METADATA"} <= files
    assert not [f for f in files if not f.startswith(SP_REL)], sorted(files)
    assert not [f for f in files if f.endswith(("setuptools.py", "__main__.py", "_paths.py"))]
    record = (kiln_packages["kiln-runtime-prefix"] / SP_REL / "kiln_runtime-0.1.0.dist-info"
              / "RECORD").read_text()
    assert f"kiln/_runtime{ext_suffix},," in record


def test_compiler_package(kiln_packages):
    files = kiln_packages["kiln-compiler-files"]
    assert {"bin/kiln", "lib/cmake/Kiln/KilnConfig.cmake", "lib/cmake/Kiln/KilnConfigVersion.cmake",
            "lib/cmake/Kiln/AddPythonKernels.cmake", f"{SP_REL}/kiln/setuptools.py",
            f"{SP_REL}/kiln/__main__.py", f"{SP_REL}/kiln/_paths.py",
            f"{SP_REL}/kiln_compiler-0.1.0.dist-info/entry_points.txt",
            "etc/conda/activate.d/~~kiln_activate.sh",
            "etc/conda/deactivate.d/~~kiln_deactivate.sh"} <= files
    # Nothing of kiln-runtime's: the two packages install side by side.
    assert not files & kiln_packages["kiln-runtime-files"]
    prefix = kiln_packages["kiln-compiler-prefix"]
    env = dict(os.environ, PYTHONPATH=str(prefix / SP_REL))
    assert run([prefix / "bin" / "kiln", "--version"]).stdout.startswith("kiln ")
    cmake_dir = run([sys.executable, "-m", "kiln", "--cmake-dir"], env=env).stdout.strip()
    assert pathlib.Path(cmake_dir) == prefix / "lib" / "cmake" / "Kiln"
    probe = ("import importlib.metadata as m, kiln;"
             "print(kiln.__file__);"
             "print([e.value for e in m.entry_points(group='cmake.root') if e.name == 'Kiln']);"
             "print(m.version('kiln-runtime'), m.requires('kiln-compiler'))")
    out = run([sys.executable, "-c", probe], env=env).stdout.splitlines()
    assert out[0].startswith(str(prefix)), out
    assert out[1] == "['kiln']" and out[2] == "0.1.0 ['kiln-runtime==0.1.0']", out


def test_outputs_hold_the_whole_install(kiln_packages, tmp_path):
    """kiln-runtime and kiln together hold what a plain `cmake --install`
    installs: no file falls between the two components."""
    run(["cmake", "--install", BUILD_DIR, "--prefix", tmp_path])
    everything = snapshot(tmp_path)
    ours = {f for f in kiln_packages["kiln-runtime-files"] | kiln_packages["kiln-compiler-files"]
            if ".dist-info/" not in f and not f.startswith("etc/conda/")}
    assert ours == everything, sorted(everything ^ ours)


def test_conda_files_hold_info(kiln_packages):
    for name in ("kiln-runtime", "kiln-compiler"):
        staging = kiln_packages["dist"] / f"extracted-{name}"
        cph.extract(str(kiln_packages[name]), str(staging))
        index = json.loads((staging / "info" / "index.json").read_text())
        assert index["name"] == name and index["version"] == "0.1.0"
        paths = json.loads((staging / "info" / "paths.json").read_text())["paths"]
        listed = (staging / "info" / "files").read_text().splitlines()
        assert [p["_path"] for p in paths] == listed
        for entry in paths:
            data = (staging / entry["_path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["_path"]
        exports = json.loads((staging / "info" / "run_exports.json").read_text())
        assert "kiln-runtime >=0.1.0,<0.2.0a0" in exports.get("strong", []) + exports.get("weak", [])
    kiln_index = json.loads((kiln_packages["dist"] / "extracted-kiln-compiler" / "info" / "index.json").read_text())
    assert "kiln-runtime ==0.1.0" in kiln_index["depends"]


# --- the example downstream recipe --------------------------------------------

def host_prefix_with_python(prefix):
    """A host prefix as conda-build makes it: its own Python (a venv whose
    site-packages also sees this one's numpy, pip and scikit-build-core, as
    conda would have installed them there)."""
    run([sys.executable, "-m", "venv", "--without-pip", prefix])
    import sysconfig
    (prefix / SP_REL / "_host_requirements.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return prefix / "bin" / "python"


@pytest.fixture(scope="module")
def example_package(tmp_path_factory, kiln_packages, example_recipe):
    if shutil.which("ninja") is None:
        pytest.skip("ninja is not installed")
    root = tmp_path_factory.mktemp("conda-example")
    build_prefix = kiln_packages["kiln-compiler-prefix"]  # kiln (and kiln-runtime)
    host = root / "host-prefix"
    python = host_prefix_with_python(host)
    # kiln's strong run_exports put kiln-runtime into the host requirements.
    conda_install(kiln_packages["kiln-runtime"], host)
    before = snapshot(host)
    src = root / "work"
    shutil.copytree(EXAMPLE / example_recipe["source"]["path"], src)
    env = conda_build_env(EXAMPLE, src, host, build_prefix, "vecmath",
                          example_recipe["package"]["version"], python,
                          CMAKE_ARGS=f"-DCMAKE_INSTALL_PREFIX={host} -DCMAKE_BUILD_TYPE=Release")
    # conda-build activates the build prefix: cuda-nvcc's script first
    # (~cuda-nvcc_activate.sh sets CUDAARCHS), then Kiln's (~~kiln_activate.sh).
    script = textwrap.dedent("""\
        set -euo pipefail
        export CUDAARCHS="{nvcc}"
        for script in "$BUILD_PREFIX"/etc/conda/activate.d/*.sh; do source "$script"; done
        echo "CUDAARCHS=$CUDAARCHS"
        echo "CMAKE_ARGS=$CMAKE_ARGS"
        bash "$RECIPE_DIR/build.sh"
        """).format(nvcc=NVCC_CUDAARCHS)
    log = run(["bash", "-c", script], env=env, cwd=src, timeout=600)
    files = {f for f in snapshot(host) - before if "__pycache__" not in f}
    # What conda-build adds to run: the recipe's run requirements and the
    # strong run_exports of its build requirements (kiln's).
    kiln_exports = outputs_by_name(kiln_packages["recipe"])["kiln-compiler"]["build"]["run_exports"]["strong"]
    depends = example_recipe["requirements"]["run"] + kiln_exports
    package = pack(host, files, root, name="vecmath", version=example_recipe["package"]["version"],
                   depends=depends, summary=example_recipe["about"]["summary"])
    return {"package": package, "files": files, "log": log.stdout + log.stderr, "root": root}


def test_example_build_used_kiln_archs(example_package):
    log = example_package["log"]
    assert f"CUDAARCHS={KILN_CUDAARCHS}" in log
    assert f"-DKiln_DIR=" in log
    files = example_package["files"]
    assert any(re.fullmatch(rf"{SP_REL}/vecmath/kernels\..*\.so", f) for f in files), sorted(files)
    assert f"{SP_REL}/vecmath/__init__.py" in files
    assert f"{SP_REL}/vecmath/kernels.py" not in files
    # The module that stays Python ships with its companion.
    assert f"{SP_REL}/vecmath/ops.py" in files
    assert any(re.fullmatch(rf"{SP_REL}/vecmath/_ops\.kiln\..*\.so", f) for f in files), sorted(files)
    assert any(f.startswith(f"{SP_REL}/vecmath-1.0.0.dist-info/") for f in files)


def test_example_audit(example_package, kiln):
    package = example_package["package"]
    result = kiln("audit", package, "--require-arch", KILN_CUDAARCHS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "conda package" in result.stdout and "vecmath.kernels" in result.stdout
    # compute_80 PTX was not built (only compute_90, Kiln's newest).
    result = kiln("audit", package, "--require-arch", "80")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "compute_80" in result.stderr


def test_example_installs_and_runs_without_kiln(example_package, kiln_packages, tmp_path):
    prefix = tmp_path / "env"
    index = conda_install(example_package["package"], prefix)
    assert "kiln-runtime >=0.1.0,<0.2.0a0" in index["depends"]
    assert not [d for d in index["depends"] if d.split()[0] == "kiln-compiler"]
    conda_install(kiln_packages["kiln-runtime"], prefix)
    assert not (prefix / "bin" / "kiln").exists()
    check = textwrap.dedent("""\
        import numpy as np
        import kiln, vecmath
        assert kiln.target() == "cpu"
        x = np.linspace(-1, 1, 1000, dtype=np.float32)
        y = np.arange(1000, dtype=np.float32)
        np.testing.assert_allclose(vecmath.scaled_axpy(3, x, y), 2 * (3 * x + y), rtol=1e-6)
        d = x.astype(np.float64)
        np.testing.assert_allclose(vecmath.scaled_axpy(0.5, d, d), 2 * (1.5 * d))
        # ops.py's kernel, precompiled in its companion, with the table ops.py
        # computes at import; no compiler here.
        np.testing.assert_allclose(vecmath.weighed(d), d * np.tile(np.linspace(0.5, 2.0, 4), 250))
        print(kiln.__file__)
        print(vecmath.kernels.__file__)
        """)
    env = {k: v for k, v in os.environ.items() if k not in ("KILN",)}
    env.update(KILN_TARGET="cpu", PYTHONPATH=str(prefix / SP_REL))
    out = run([sys.executable, "-c", check], env=env, cwd=tmp_path).stdout.splitlines()
    assert all(line.startswith(str(prefix)) for line in out), out
