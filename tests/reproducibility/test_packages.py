"""Packages built from two checkouts of one project are byte for byte the
same: wheels by pip through kiln.setuptools (one from the checkout, one as
`python -m build` makes it, from the sdist unpacked in a temporary folder),
and modules by CMake's add_python_kernels() in build folders of their own.

The project maps its package `acme.rp` onto the folder `rp` and has no
pyproject.toml, so the folder above its top-level package lies outside the
checkout: only the root the integration passes (the setup.py's folder,
CMake's top source folder) makes the recorded paths the same. Wheels are
built with SOURCE_DATE_EPOCH, which sets their entries' times, as
reproducible builds set it; nothing reaches the network.
"""

import os
import shutil
import sys
import zipfile

import pytest

from checked_run import run_checked
from repro_builds import BUILD_DIR, assert_same_build, kiln_binary, write_checkout

# Builds whole projects: `scripts/test.sh --quick` skips it.
pytestmark = pytest.mark.slow

SETUP_PY = """\
from setuptools import setup
from kiln.setuptools import KernelModule, build_ext

setup(
    name="acme-rp",
    version="1.0",
    packages=["acme.rp"],
    package_dir={"acme.rp": "rp"},
    ext_modules=[KernelModule("acme.rp.k_basic", "rp/k_basic.py", archs="80")],
    cmdclass={"build_ext": build_ext},
)
"""

CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.20)
project(acme_rp C)
find_package(Kiln CONFIG REQUIRED)
add_python_kernels(acme_rp_k_basic rp/k_basic.py MODULE acme.rp.k_basic ARCHITECTURES 80)
"""


def checkout_with(folder, name, text):
    write_checkout(folder)
    (folder / name).write_text(text)
    return folder


def build_env():
    env = dict(os.environ, KILN=kiln_binary(), PYTHONPATH=str(BUILD_DIR / "python"),
               SOURCE_DATE_EPOCH="1700000000", PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", KILN_CACHE="0")
    env.pop("CUDAARCHS", None)
    return env


def wheel_entries(wheel):
    with zipfile.ZipFile(wheel) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def test_wheels_from_two_checkouts_and_from_an_sdist_are_the_same(tmp_path):
    one = checkout_with(tmp_path / "checkout-one", "setup.py", SETUP_PY)
    two = checkout_with(tmp_path / "deeper" / "still" / "checkout-two", "setup.py", SETUP_PY)
    env = build_env()
    wheels = []
    for number, checkout in enumerate((one, two)):
        out = tmp_path / f"wheels-{number}"
        run_checked([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                     "-w", out, "."], checkout, env)
        wheels.extend(sorted(out.glob("*.whl")))
    run_checked([sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check",
                 "--outdir", tmp_path / "from-sdist", "."], two, env)
    wheels.extend(sorted((tmp_path / "from-sdist").glob("*.whl")))
    assert len(wheels) == 3, wheels
    entries = [wheel_entries(wheel) for wheel in wheels]
    assert any(name.startswith("acme/rp/k_basic") and name.endswith(".so") for name in entries[0]), (
        sorted(entries[0]))
    assert_same_build(entries[0], entries[1], "a wheel of another checkout (its entries)")
    assert_same_build(entries[0], entries[2], "a wheel built from the sdist (its entries)")
    assert wheels[0].read_bytes() == wheels[1].read_bytes() == wheels[2].read_bytes(), (
        "the wheels' entries are the same, their archives are not")


def cmake_build(checkout, build_folder):
    for tool in ("cmake", "ninja"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    env = dict(os.environ, KILN_CACHE="0")
    run_checked(["cmake", "-S", checkout, "-B", build_folder, "-G", "Ninja",
                 f"-DKiln_DIR={BUILD_DIR / 'cmake_modules'}", "-DKILN_PYTHON_EXT_SUFFIX=.so"],
                None, env)
    run_checked(["ninja", "-C", build_folder], None, env)
    return {"k_basic.so": (build_folder / "k_basic.so").read_bytes()}


def test_cmake_builds_of_two_checkouts_in_their_own_build_folders_are_the_same(tmp_path):
    one = checkout_with(tmp_path / "checkout-one", "CMakeLists.txt", CMAKE_LISTS)
    two = checkout_with(tmp_path / "deeper" / "checkout-two", "CMakeLists.txt", CMAKE_LISTS)
    reference = cmake_build(one, one / "build")
    variation = cmake_build(two, tmp_path / "elsewhere" / "build-two")
    assert_same_build(reference, variation, "another checkout and build folder under CMake")


def test_the_setup_py_folder_is_the_root_kiln_setuptools_passes(tmp_path):
    checkout = checkout_with(tmp_path / "checkout", "setup.py", SETUP_PY)
    run_checked([sys.executable, "setup.py", "build_ext", "--inplace"], checkout, build_env())
    modules = sorted((checkout / "rp").glob("k_basic*.so"))
    assert len(modules) == 1, f"build_ext --inplace wrote {modules}"
    module = modules[0].read_bytes()
    assert b"rp/k_basic.py" in module
    assert b"checkout/rp/k_basic.py" not in module, (
        "the path is relative to the folder above the package, not to setup.py's")
