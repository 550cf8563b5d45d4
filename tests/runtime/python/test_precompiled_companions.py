"""Modules that import kiln stay Python: `kiln build` compiles their kernels
into a companion extension module beside them, which their kernels use
without a compiler as long as the sources it was built from are unchanged.
Kernels use device functions and constants of sibling modules."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "driver"))
from kiln_module_format import read_bundle  # noqa: E402

HELPERS = '''
from kiln import cuda

OFFSET = 0.5
WEIGHTS = (1.0, 2.0, 3.0)


@cuda.jit(device=True)
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


def host_only(x):
    return x + 1
'''

KERNELS = '''
import numpy as np
from kiln import cuda, vectorize

from ..helpers import OFFSET, clamp
from pkg.helpers import WEIGHTS as W

TPB = 32


@cuda.jit
def smooth(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = clamp(x[i] * W[i % 3] + OFFSET, 0.0, 10.0)


@cuda.jit("void(int32[::1])")
def fill(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 7


@vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
def blend(a, b):
    return clamp(0.25 * a + 0.75 * b, 0.0, 1.0)


@cuda.reduce
def total(a, b):
    return a + b


def run(x):
    out = np.zeros_like(x)
    smooth[(x.size + TPB - 1) // TPB, TPB](out, x)
    return out
'''

PYPROJECT = '''
[tool.kiln.signatures]
"pkg.sub.kernels.smooth" = ["void(float32[::1], float32[::1])"]
'''


def reference(x, offset=0.5):
    weights = np.array([1.0, 2.0, 3.0])[np.arange(x.size) % 3]
    return np.clip(x * weights + offset, 0.0, 10.0).astype(x.dtype)


@pytest.fixture
def project(tmp_path):
    """A project: pkg/helpers.py, pkg/sub/kernels.py (in the subpackage
    pkg.sub) and a pyproject.toml that lists one signature."""
    for folder in (tmp_path / "pkg", tmp_path / "pkg" / "sub"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS)
    (tmp_path / "pkg" / "sub" / "kernels.py").write_text(KERNELS)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    return tmp_path


def build(kiln, project, *flags):
    result = kiln("build", "pkg/sub/kernels.py", "--arch", "80-virtual", "--python", sys.executable,
                  *flags, cwd=project)
    assert result.returncode == 0, result.stderr
    return result


def run_python(code, project, package_dir, without_compiler=True):
    prelude = 'import sys\nsys.modules["kiln._compiler"] = None\n' if without_compiler else ""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(project), str(package_dir)]))
    result = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                            capture_output=True, text=True, env=env, timeout=300, cwd=project)
    assert result.returncode == 0, result.stderr
    return result.stdout


def companion_of(project):
    found = list((project / "pkg" / "sub").glob("_kernels.kiln.*"))
    assert len(found) == 1, f"expected one companion beside kernels.py, found {found}"
    return found[0]


def test_kiln_build_writes_a_companion_beside_the_module(project, kiln):
    source_before = (project / "pkg" / "sub" / "kernels.py").read_text()
    result = build(kiln, project, "--depfile", "kernels.d")
    companion = companion_of(project)
    assert result.stdout.split() == [str(companion.relative_to(project))]
    assert (project / "pkg" / "sub" / "kernels.py").read_text() == source_before

    manifest = json.loads(kiln("inspect", companion, "--json").stdout)
    assert manifest["module"] == "pkg.sub._kernels_kiln"
    assert manifest["companion_of"] == "pkg.sub.kernels"
    assert [source["file"] for source in manifest["sources"]] == ["kernels.py", "../helpers.py"]
    kernels = {kernel["name"]: kernel for kernel in manifest["kernels"]}
    assert [s["args"] for s in kernels["smooth"]["specializations"]] == [
        ["array(float32, 1d, C)", "array(float32, 1d, C)"]], "the signature pyproject.toml lists"
    assert [s["args"] for s in kernels["fill"]["specializations"]] == [["array(int32, 1d, C)"]]

    depfile = (project / "kernels.d").read_text()
    assert str(project / "pkg" / "helpers.py") in depfile, "the depfile must name imported modules"


def test_precompiled_kernels_run_without_the_compiler(project, kiln, package_dir):
    build(kiln, project)
    stdout = run_python('''
        import json
        import numpy as np
        import pkg.sub.kernels as k
        x = np.linspace(0, 5, 100, dtype=np.float32)
        out = np.zeros(40, np.int32)
        k.fill[2, 32](out)
        print(json.dumps({"smooth": k.run(x).tolist(), "filled": bool((out == 7).all()),
                          "source": k.__file__.endswith("kernels.py"), "signatures": k.smooth.signatures}))
    ''', project, package_dir)
    result = json.loads(stdout)
    x = np.linspace(0, 5, 100, dtype=np.float32)
    np.testing.assert_allclose(result["smooth"], reference(x), rtol=1e-6)
    assert result["filled"] and result["source"], result
    assert result["signatures"] == ["(array(float32, 1d, C), array(float32, 1d, C))"]


def test_ufuncs_and_reductions_run_from_the_companion(project, kiln, package_dir):
    build(kiln, project)
    stdout = run_python('''
        import json
        import numpy as np
        import pkg.sub.kernels as k
        a = np.linspace(0, 2, 9)
        print(json.dumps({"blend": k.blend(a, a[::-1]).tolist(),
                          "integers": int(k.total(np.arange(100, dtype=np.int64))),
                          "floats": float(k.total(np.arange(10, dtype=np.float32)))}))
    ''', project, package_dir)
    result = json.loads(stdout)
    a = np.linspace(0, 2, 9)
    np.testing.assert_allclose(result["blend"], np.clip(0.25 * a + 0.75 * a[::-1], 0, 1))
    assert (result["integers"], result["floats"]) == (4950, 45.0)


def test_a_type_nobody_recorded_names_the_command_that_adds_it(project, kiln, package_dir):
    build(kiln, project)
    stdout = run_python('''
        import numpy as np
        import pkg.sub.kernels as k
        try:
            k.run(np.ones(4))
        except Exception as error:
            print(type(error).__name__, error, sep="\\n")
    ''', project, package_dir)
    assert stdout.splitlines()[0] == "NoSpecializationError"
    assert "kernel 'smooth' has no specialization for (float64[::1], float64[::1])" in stdout
    command = stdout.splitlines()[-1].split()
    assert command[:4] == ["kiln", "signatures", "add", "pkg.sub.kernels.smooth"], stdout

    # The command it names adds the signature, and the rebuilt package has it.
    added = kiln(*command[1:4], "void(float64[::1], float64[::1])", cwd=project)
    assert added.returncode == 0, added.stderr
    build(kiln, project)
    stdout = run_python('''
        import numpy as np
        import pkg.sub.kernels as k
        print(k.run(np.arange(6.0)).tolist())
    ''', project, package_dir)
    assert json.loads(stdout) == reference(np.arange(6.0)).tolist()


def test_an_edited_source_is_detected(project, kiln, package_dir):
    build(kiln, project)
    helpers = project / "pkg" / "helpers.py"
    helpers.write_text(HELPERS.replace("OFFSET = 0.5", "OFFSET = 1.5"))
    code = '''
        import numpy as np
        import pkg.sub.kernels as k
        try:
            print(k.run(np.arange(6, dtype=np.float32)).tolist())
        except Exception as error:
            print(type(error).__name__, error, sep="\\n")
    '''
    without = run_python(code, project, package_dir).splitlines()
    assert without[0] == "NoSpecializationError", without
    assert f"{helpers} changed after {companion_of(project).name} was built from it" in without[1]

    with_compiler = run_python(code, project, package_dir, without_compiler=False)
    x = np.arange(6, dtype=np.float32)
    assert json.loads(with_compiler) == reference(x, offset=1.5).tolist(), \
        "with the compiler, the edited module must be compiled again"


def test_a_damaged_companion_is_an_import_error_naming_it(project, kiln, package_dir):
    build(kiln, project)
    companion = companion_of(project)
    data = bytearray(companion.read_bytes())
    bundle = read_bundle(bytes(data))[0]
    data[bundle["file_offset"] + bundle["manifest_offset"] + bundle["manifest_size"] // 2] ^= 0x01
    companion.write_bytes(bytes(data))
    stdout = run_python('''
        import numpy as np
        import pkg.sub.kernels as k
        try:
            k.run(np.ones(4, np.float32))
        except ImportError as error:
            print(error)
    ''', project, package_dir)
    assert "_kernels_kiln" in stdout and "damaged" in stdout, stdout


def test_names_a_sibling_does_not_define_are_errors_where_kernels_use_them(tmp_path, kiln):
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "uses_missing.py").write_text(textwrap.dedent('''
        from kiln import cuda
        from helpers import SCALE


        @cuda.jit("void(float32[::1])")
        def scale(out):
            out[0] = SCALE
    '''))
    result = kiln("build", tmp_path / "uses_missing.py", "--emit", "typed", "-o", tmp_path / "out")
    assert result.returncode == 1
    assert "SCALE" in result.stderr and "helpers.SCALE" in result.stderr, result.stderr


def test_audit_names_stale_companions_and_signatures_not_precompiled(project, kiln):
    build(kiln, project)
    recorded = project / "kiln-signatures.toml"
    added = kiln("signatures", "add", "pkg.sub.kernels.smooth", "void(float32[::1], float32[::1])",
                 cwd=project)
    assert added.returncode == 0, added.stderr
    clean = kiln("audit", project / "pkg", cwd=project)
    assert clean.returncode == 0, clean.stderr
    assert "companion of pkg.sub.kernels, built from 2 source files, all unchanged" in clean.stdout
    assert f"every signature {recorded} records for this package's kernels is precompiled" in clean.stdout

    kiln("signatures", "add", "pkg.sub.kernels.smooth", "void(int64[::1], int64[::1])", cwd=project)
    (project / "pkg" / "helpers.py").write_text(HELPERS + "\n# edited\n")
    result = kiln("audit", project / "pkg", "--json", cwd=project)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False
    [module] = report["modules"]
    assert module["companion_of"] == "pkg.sub.kernels"
    assert module["stale_sources"] == ["../helpers.py changed after the module was built from it"]
    assert report["not_precompiled"] == [{
        "kernel": "pkg.sub.kernels.smooth", "signature": "void(int64[::1], int64[::1])",
        "module": module["path"]}]
    assert "has no precompiled specialization of it" in result.stderr
