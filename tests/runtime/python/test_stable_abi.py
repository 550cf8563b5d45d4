"""One build for every CPython: kiln._runtime and kiln._compiler are
compiled against CPython's limited API (3.11's) and named `*.abi3.so`, and
kernel modules are `*.abi3.so` too, so that the kernel module and runtime
built here under one CPython import and run under every other.

abi3audit (PyPI) checks each extension's imports against the stable ABI of
the version it claims. The other CPythons are whatever this machine has
(tests/other_cpythons.py); each runs in a fresh virtual environment with
NumPy from .venv/wheelhouse, which scripts/setup.sh fills for them.
CPython 3.10, older than the runtime's limited API, gets a runtime built for
it alone from the same sources (KILN_PYTHON_STABLE_ABI off), and runs the
same abi3 kernel module."""

import os
import pathlib
import shutil
import sys

import pytest

from checked_run import run_checked
from other_cpythons import cpython_environment

RUNS_EVERYWHERE = """
import sys
import numpy as np
import kiln._runtime
from kiln import cuda
import vector_add

x = np.arange(1000, dtype=np.float32)
out = np.zeros_like(x)
vector_add.vector_add[8, 128](out, x, x)
np.testing.assert_array_equal(out, x + x)
device_x = cuda.to_device(x)
device_out = cuda.device_array_like(x)
vector_add.vector_add[8, 128](device_out, device_x, device_x)
np.testing.assert_array_equal(device_out.copy_to_host(), x + x)
print("%d.%d" % sys.version_info[:2], kiln._runtime.__file__, vector_add.__file__)
"""


def abi3audit(*arguments):
    audit = pathlib.Path(sys.executable).parent / "abi3audit"
    if not audit.exists():
        pytest.fail("abi3audit is not installed in .venv; run scripts/setup.sh")
    return run_checked([audit, "--strict", "--summary", *arguments])


@pytest.fixture(scope="module")
def abi3_module(kiln, repo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("abi3-module")
    result = kiln("build", repo_root / "examples" / "vector_add.py", "--module", "vector_add",
                  "-o", out, "--arch", "80")
    assert result.returncode == 0, result.stderr
    module = out / "vector_add.abi3.so"
    assert module.exists(), sorted(out.iterdir())
    return module


def test_the_runtime_and_the_compiler_binding_use_only_the_stable_abi(build_dir):
    package = build_dir / "python" / "kiln"
    extensions = sorted(package.glob("_*.so"))
    assert [path.name for path in extensions] == ["_compiler.abi3.so", "_runtime.abi3.so"]
    result = abi3audit("--assume-minimum-abi3", "3.11", *extensions)
    assert "0 ABI version mismatches and 0 ABI violations" in " ".join(result.stderr.split())


def test_a_kernel_module_uses_only_the_stable_abi_of_cpython_3_10(abi3_module):
    result = abi3audit("--assume-minimum-abi3", "3.10", abi3_module)
    assert "0 ABI version mismatches and 0 ABI violations" in " ".join(result.stderr.split())


def run_everywhere_script(python, package_parent, module):
    env = dict(os.environ, KILN_TARGET="cpu",
               PYTHONPATH=os.pathsep.join([str(package_parent), str(module.parent)]))
    return run_checked([python, "-c", RUNS_EVERYWHERE], env=env, cwd=module.parent).stdout.split()


@pytest.mark.slow
@pytest.mark.parametrize("minor", [12, 13])
def test_one_runtime_and_kernel_module_build_runs_on_later_cpythons(minor, build_dir, abi3_module,
                                                                   repo_root, tmp_path_factory):
    python = cpython_environment(minor, repo_root / ".venv" / "wheelhouse",
                                 tmp_path_factory.mktemp(f"cpython3{minor}"))
    version, runtime, module = run_everywhere_script(python, build_dir / "python", abi3_module)
    assert version == f"3.{minor}"
    assert runtime == str(build_dir / "python" / "kiln" / "_runtime.abi3.so")
    assert module == str(abi3_module)


@pytest.mark.slow
def test_a_runtime_built_for_cpython_3_10_runs_the_same_kernel_module(repo_root, abi3_module,
                                                                      tmp_path_factory):
    python = cpython_environment(10, repo_root / ".venv" / "wheelhouse",
                                 tmp_path_factory.mktemp("cpython310"))
    build = tmp_path_factory.mktemp("runtime310")
    configure = ["cmake", "-S", repo_root, "-B", build, "-G", "Ninja",
                 "-DKILN_RUNTIME_ONLY=ON", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DPython3_EXECUTABLE={python}", "-DCMAKE_C_COMPILER=clang-19",
                 "-DCMAKE_CXX_COMPILER=clang++-19"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    run_checked(configure)
    run_checked(["cmake", "--build", build, "--target", "kiln_python_runtime"], timeout=1200)
    package = build / "python" / "kiln"
    assert [path.name for path in package.glob("_runtime*.so")] == [
        "_runtime.cpython-310-x86_64-linux-gnu.so"]
    version, runtime, module = run_everywhere_script(python, build / "python", abi3_module)
    assert version == "3.10"
    assert runtime.endswith("_runtime.cpython-310-x86_64-linux-gnu.so")
    assert module == str(abi3_module)
