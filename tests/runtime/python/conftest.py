"""Fixtures for the runtime's Python tests.

Kernel modules are compiled with `kiln build --module` into a session folder
and imported like any extension module; the `kiln` package comes from the
build tree (build/python), and kernels run on the CPU engine unless a test
says otherwise (KILN_TARGET is read at the runtime's first use).

On a GPU machine without the compiler (scripts/gpu-check.sh), the modules
come built: KILN_PREBUILT_MODULES names a folder holding each module in a
folder of its name, and a test whose module is not there is skipped.
"""

import importlib
import os
import pathlib
import sys
import textwrap

import pytest

os.environ.setdefault("KILN_TARGET", "cpu")

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILD_DIR = pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO_ROOT / "build"))
PACKAGE_DIR = BUILD_DIR / "python"
EXAMPLES = REPO_ROOT / "examples"

if str(PACKAGE_DIR) not in sys.path:
    sys.path.insert(0, str(PACKAGE_DIR))

# One real architecture keeps builds quick; the back end's tests cover the
# default list.
TEST_ARCH = "80"


@pytest.fixture(scope="session")
def package_dir():
    """The folder to put on PYTHONPATH so that `import kiln` finds the build."""
    return PACKAGE_DIR


PREBUILT_MODULES = os.environ.get("KILN_PREBUILT_MODULES")


def _prebuilt(name, flags):
    folder = pathlib.Path(PREBUILT_MODULES) / name
    if flags or not folder.is_dir():
        pytest.skip(f"module {name} {' '.join(flags)} is not among the prebuilt modules")
    return folder


@pytest.fixture(scope="session")
def build_module(request, tmp_path_factory):
    """build_module(source, module_name=None, *flags) -> folder holding the built module.

    Each (source, name, flags) is built once per session.
    """
    built = {}

    def build(source, module_name=None, *flags):
        source = pathlib.Path(source)
        name = module_name or source.stem
        if PREBUILT_MODULES:
            return _prebuilt(name, flags)
        kiln = request.getfixturevalue("kiln")
        key = (str(source), name, flags)
        if key not in built:
            folder = tmp_path_factory.mktemp(name.replace(".", "_"))
            result = kiln(
                "build", source, "--module", name, "-o", folder, "--arch", TEST_ARCH, "--python", sys.executable, *flags
            )
            assert result.returncode == 0, f"kiln build {source} --module {name} failed:\n{result.stderr}"
            built[key] = folder
        return built[key]

    return build


@pytest.fixture(scope="session")
def import_built(build_module):
    """import_built(source, module_name=None) -> the imported built module."""

    def load(source, module_name=None):
        source = pathlib.Path(source)
        name = module_name or source.stem
        if name in sys.modules:
            return sys.modules[name]
        folder = build_module(source, name)
        sys.path.insert(0, str(folder))
        try:
            return importlib.import_module(name)
        finally:
            sys.path.remove(str(folder))

    return load


@pytest.fixture(scope="session")
def example(import_built):
    """example("vector_add") -> the built examples/vector_add.py."""

    def load(name):
        return import_built(EXAMPLES / f"{name}.py")

    return load


def _source_loader(folder):
    """load(name, source, **siblings), and the names it imported."""
    imported = []

    def load(name, source, **siblings):
        for sibling, text in siblings.items():
            (folder / f"{sibling}.py").write_text(textwrap.dedent(text))
            imported.append(sibling)
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
        sys.path.insert(0, str(folder))
        try:
            imported.append(name)
            return importlib.import_module(name)
        finally:
            sys.path.remove(str(folder))

    return load, imported


@pytest.fixture
def source_module(tmp_path):
    """source_module(name, source, **siblings) -> the module, imported from
    tmp_path as Python source (so that its kernels compile on demand), with
    sibling modules in the same folder if given; forgotten after the test."""
    load, imported = _source_loader(tmp_path)
    yield load
    for name in imported:
        sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def file_source_module(tmp_path_factory):
    """source_module for a whole test file, whose kernels then compile once."""
    load, imported = _source_loader(tmp_path_factory.mktemp("sources"))
    yield load
    for name in imported:
        sys.modules.pop(name, None)
