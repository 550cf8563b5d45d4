"""Kernel modules built in process (kiln._compiler, the pipeline `kiln build
--module` runs) and imported, so that the back end's tests run kernels
through the runtime users get, on its CPU engine, and compare the results
with NumPy:

    module = compile_module(path)
    module.add_kernel[blocks, threads](x, y, out)

A failed launch raises what the runtime raises for users: the builtin
exception class a kernel raised (its message "tid=[..] ctaid=[..]: ..."),
ValueError for a bad launch configuration, RuntimeError for a deadlock.
"""

import atexit
import importlib
import importlib.util
import json
import itertools
import os
import pathlib
import shutil
import sys
import tempfile

# KILN_TARGET is read at the runtime's first use.
os.environ.setdefault("KILN_TARGET", "cpu")

_REPO = pathlib.Path(__file__).resolve().parents[2]
_BUILD = pathlib.Path(os.environ.get("KILN_BUILD_DIR", _REPO / "build"))
if str(_BUILD / "python") not in sys.path:
    sys.path.insert(0, str(_BUILD / "python"))

from kiln import _compiler  # noqa: E402

# The build refused the module; the message holds Kiln's diagnostics.
CompileError = _compiler.CompileError

# The CPU engine needs no cubin: PTX alone keeps ptxas out of every build.
_ARCH = "80-virtual"
_built = itertools.count()
_work = None


def _work_folder():
    """Where modules of source files outside a test's own folder are built."""
    global _work
    if _work is None:
        _work = tempfile.mkdtemp(prefix="kiln-cpu-")
        atexit.register(shutil.rmtree, _work, ignore_errors=True)
    return pathlib.Path(_work)


def compile_module(path, directory=None, switchable_index_checks=False):
    """Builds the kernel module at `path` and imports it; with
    `switchable_index_checks`, each kernel's host code holds its body with
    and without index checks (--switchable-index-checks).

    Each build gets a module name of its own, so a test may build the same
    file twice in one process."""
    path = pathlib.Path(path)
    name = f"{path.stem}_{next(_built)}"
    output = (pathlib.Path(directory) if directory else _work_folder()) / f"built_{name}"
    [extension] = _compiler.build_module(str(path), str(output), module_name=name, arch=_ARCH,
                                         switchable_index_checks=switchable_index_checks)
    spec = importlib.util.spec_from_file_location(name, extension)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def fat_binaries_for_every_default_architecture(source, directory, kiln):
    """Builds `source` (as directory/name.py) with `kiln build --emit fatbin`
    for Kiln's default architectures, through ptxas for each, and returns,
    per kernel specialization, the fat binary it loads from (the kernels of
    an image share one); fails the test with kiln's diagnostics if the build
    fails."""
    path = pathlib.Path(directory) / "every_architecture.py"
    path.write_text(source)
    output = pathlib.Path(directory) / "every_architecture"
    built = kiln("build", path, "--emit", "fatbin", "-o", output, "--no-cache")
    assert built.returncode == 0, built.stderr
    manifest = json.loads((output / "every_architecture.manifest.json").read_text())
    fatbins = []
    for spec in manifest["specializations"]:
        [name] = spec["files"]
        fatbin = output / name
        assert fatbin.read_bytes()[:4] == bytes.fromhex("50ed55ba"), f"{fatbin} is no fat binary"
        fatbins.append(fatbin)
    return fatbins


def compile_source(source, directory, name="kernels", switchable_index_checks=False):
    """Writes `source` to directory/name.py, builds it and imports it."""
    path = pathlib.Path(directory) / f"{name}.py"
    path.write_text(source)
    return compile_module(path, directory, switchable_index_checks)
