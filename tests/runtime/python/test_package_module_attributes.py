"""Kernels read attributes of the modules their package imports, as Numba's
do: `from . import config` then `config.THRESHOLD` (frozen when the kernel
compiles, values computed at import included), `core.clamp(...)` from a
module full of @njit code, `import pkg.sub.deep as deep`, `import
pkg.sub.deep`, `from .. import config`, enums of other modules, module
constants computed from them. Kernels compiled on demand and a module built
with `kiln build --module` both give what Numba's simulator gives for the
same package; editing a constant another module defines recompiles the
kernels that read it; a missing attribute is an error naming it."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": '''
        import enum
        import os

        import numpy as np

        THRESHOLD = 5
        SCALE = float(os.environ.get("PKG_SCALE", "2.0"))
        TABLE = np.arange(4, dtype=np.float32) * 10
        LIMITS = (0, 40)


        class Mode(enum.IntEnum):
            PLAIN = 1
            SHIFTED = 2
        ''',
    "pkg/core.py": '''
        from numba import njit
        from kiln import cuda


        @njit
        def host_scale(x):
            return x * 3


        @njit(cache=False)
        def host_total(values):
            return values.sum()


        @cuda.jit(device=True)
        def clamp(x, lo, hi):
            return min(max(x, lo), hi)
        ''',
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": '''
        from kiln import cuda

        OFFSET = 100


        @cuda.jit(device=True)
        def shift(x):
            return x + OFFSET
        ''',
    "pkg/sub/kernels.py": '''
        from kiln import cuda

        from .. import config
        from . import deep


        @cuda.jit("void(float64[::1])")
        def from_parent(out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = deep.shift(config.THRESHOLD * i)
        ''',
    "pkg/kernels.py": '''
        from kiln import cuda

        import pkg.sub.deep
        import pkg.sub.deep as deep
        from . import config, core
        from .sub import deep as also_deep

        LIMIT = config.THRESHOLD * 2 + also_deep.OFFSET


        @cuda.jit("void(float64[::1], float64[::1], int64)")
        def apply(out, values, mode):
            i = cuda.grid(1)
            if i < out.size:
                v = values[i]
                if v > config.THRESHOLD:
                    v = core.clamp(v, config.LIMITS[0], config.LIMITS[1]) * config.SCALE
                if mode == config.Mode.SHIFTED:
                    v = deep.shift(v)
                out[i] = v + config.TABLE[i % 4] + pkg.sub.deep.OFFSET + LIMIT
        ''',
}

RUN = '''
import json
import sys

import numpy as np

from pkg import kernels
from pkg.sub import kernels as sub_kernels

values = np.arange(16, dtype=np.float64) * 3
results = {}
for mode in (1, 2):
    out = np.zeros(16)
    kernels.apply[2, 8](out, values, mode)
    results[f"apply mode {mode}"] = out.tolist()
out = np.zeros(16)
sub_kernels.from_parent[2, 8](out)
results["from_parent"] = out.tolist()
print(json.dumps(results))
'''


def write_package(root, files=FILES, replace=("", "")):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).replace(*replace))


def run(root, package_dir, env=None, without_compiler=False):
    """What RUN prints, run in a fresh interpreter on the package in `root`;
    `without_compiler`: as where Kiln's compiler is not installed."""
    environment = dict(os.environ, KILN_TARGET="cpu", PYTHONPATH=os.pathsep.join([str(root), str(package_dir)]))
    environment.update(env or {})
    prelude = 'import sys\nsys.modules["kiln._compiler"] = None\n' if without_compiler else ""
    done = subprocess.run([sys.executable, "-c", prelude + RUN], cwd=root, capture_output=True, text=True,
                          env=environment, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def numba_results(tmp_path_factory, package_dir):
    """What Numba's simulator computes for the same package."""
    root = tmp_path_factory.mktemp("numba")
    write_package(root, replace=("from kiln import cuda", "from numba import cuda"))
    return run(root, package_dir, env={"NUMBA_ENABLE_CUDASIM": "1"})


def test_kernels_compiled_on_demand_read_their_package_as_numba_does(tmp_path, package_dir, numba_results):
    write_package(tmp_path)
    assert run(tmp_path, package_dir) == numba_results


def test_a_built_module_reads_its_package_as_numba_does(tmp_path, package_dir, kiln, numba_results):
    write_package(tmp_path)
    for module in ("pkg.kernels", "pkg.sub.kernels"):
        path = tmp_path / (module.replace(".", "/") + ".py")
        built = kiln("build", path, "--arch", "80", "--python", sys.executable, cwd=tmp_path)
        assert built.returncode == 0, built.stderr
    assert run(tmp_path, package_dir, without_compiler=True) == numba_results


def test_editing_a_constant_of_another_module_recompiles_the_kernels_that_read_it(tmp_path, package_dir, kiln,
                                                                               numba_results):
    write_package(tmp_path)
    before = run(tmp_path, package_dir)
    config = tmp_path / "pkg" / "config.py"
    config.write_text(config.read_text().replace("THRESHOLD = 5", "THRESHOLD = 11"))
    after = run(tmp_path, package_dir)
    numba_root = tmp_path / "numba"
    write_package(numba_root, replace=("from kiln import cuda", "from numba import cuda"))
    numba_config = numba_root / "pkg" / "config.py"
    numba_config.write_text(numba_config.read_text().replace("THRESHOLD = 5", "THRESHOLD = 11"))
    assert before == numba_results
    assert after != before, "THRESHOLD changed, so must the results"
    assert after == run(numba_root, package_dir, env={"NUMBA_ENABLE_CUDASIM": "1"})


def test_a_value_read_from_the_environment_at_import_is_frozen_at_compile_time(tmp_path, package_dir, numba_results):
    write_package(tmp_path / "kiln")
    write_package(tmp_path / "numba", replace=("from kiln import cuda", "from numba import cuda"))
    scaled = run(tmp_path / "kiln", package_dir, env={"PKG_SCALE": "4.0"})
    assert scaled["apply mode 1"] != numba_results["apply mode 1"], "SCALE is read when the kernel compiles"
    assert scaled == run(tmp_path / "numba", package_dir, env={"PKG_SCALE": "4.0", "NUMBA_ENABLE_CUDASIM": "1"})


def test_an_attribute_the_module_does_not_have_is_an_error_naming_it(tmp_path, kiln):
    write_package(tmp_path)
    (tmp_path / "pkg" / "wrong.py").write_text(textwrap.dedent('''
        from kiln import cuda
        from . import config


        @cuda.jit("void(float64[::1])")
        def missing(out):
            out[0] = config.NOT_THERE


        @cuda.jit("void(float64[::1])")
        def module_as_value(out):
            c = config
            out[0] = 1
        '''))
    result = kiln("check", tmp_path / "pkg" / "wrong.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "module '.config' has no attribute 'NOT_THERE' that kernels can use" in result.stderr, result.stderr
    assert "wrong.py:8:21" in result.stderr, "the error points at the attribute"
    assert "module '.config' has no value at run time" in result.stderr, result.stderr
