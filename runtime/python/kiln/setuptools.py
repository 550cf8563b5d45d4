"""Build Kiln kernel modules with setuptools.

In ``setup.py``::

    from setuptools import setup
    from kiln.setuptools import KernelModule, build_ext

    setup(
        ext_modules=[KernelModule("pkg.kernels", "pkg/kernels.py", archs="75;80;90")],
        cmdclass={"build_ext": build_ext},
    )

or, without ``setup.py``, in ``pyproject.toml`` (picked up by the
``setuptools.finalize_distribution_options`` entry point that an installed
Kiln registers)::

    [tool.kiln]
    modules = [{name = "pkg.kernels", source = "pkg/kernels.py", archs = "75;80"}]
    remote-cache = "redis://cache.internal:6379|read-only"   # optional

``build_ext`` runs ``kiln build SOURCE --module NAME`` for every
``KernelModule`` (other extensions build as usual), writing the extension
module where setuptools expects it: into ``build_lib`` for wheels, beside the
source with ``--inplace``. A kernel module written against Numba
(``from numba import cuda``) is replaced by its build: its source is left
out of wheels unless ``include_sources=True``. A module that imports Kiln
(``from kiln import cuda``) runs as Python, host code and all: its source
stays, and its build is the companion its kernels load
(``pkg/_kernels.kiln<EXT_SUFFIX>``). Wheels need the ``kiln-runtime``
package at run time, nothing else.

This module is pure Python and imports nothing of the compiler: the
``kiln`` command is found as ``$KILN``, else ``kiln`` on ``PATH``, else
``kiln`` beside ``sys.executable`` (a virtual environment's ``bin``).
See docs/setuptools.md.
"""

import ast
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension
from setuptools.command.build_ext import build_ext as _setuptools_build_ext

try:
    from distutils import log  # setuptools' own distutils, once setuptools is imported
except ImportError:  # pragma: no cover
    import logging

    log = logging.getLogger("kiln.setuptools")

try:
    from setuptools.errors import CompileError, SetupError
except ImportError:  # setuptools < 59
    from distutils.errors import CompileError
    from distutils.errors import DistutilsSetupError as SetupError

__all__ = ["KernelModule", "build_ext", "kernel_modules", "remote_caches", "find_kiln",
           "finalize_distribution_options", "RUNTIME_REQUIREMENT"]

#: What a project whose wheels hold kernel modules needs at run time.
RUNTIME_REQUIREMENT = "kiln-runtime"


def _arch_list(archs):
    if archs is None:
        return None
    if isinstance(archs, str):
        return archs
    return ";".join(str(arch) for arch in archs)


class KernelModule(Extension):
    """An extension module that ``kiln build`` compiles from a kernel module.

    name
        the dotted module name (``"pkg.kernels"``); the file is named by
        its last component and ``.abi3.so`` (or, with
        ``py_limited_api=False``, the interpreter's EXT_SUFFIX).
    source
        the kernel module (``"pkg/kernels.py"``), relative to ``setup.py``.
    archs
        GPU architectures, as ``kiln build --arch`` takes them (``"75;80;90"``,
        ``"7.5 8.0 9.0+PTX"``, a list of those); default: ``$CUDAARCHS``,
        else Kiln's default set.
    options
        more ``kiln build`` flags, such as ``["--fastmath", "-Xptxas",
        "--warn-on-spills"]``.
    include_sources
        also put ``source`` into wheels (it is left out by default).
    py_limited_api
        build one module for every CPython from 3.10 on (``kernels.abi3.so``,
        the default); False builds it for the interpreter that runs the
        build alone. A free-threaded CPython has no stable ABI: its builds
        are always for it alone.
    """

    def __init__(self, name, source, archs=None, options=(), include_sources=False,
                 py_limited_api=True, **kwargs):
        source = os.fspath(source)
        super().__init__(name, sources=[source], **kwargs)
        self.kiln_source = source
        self.kiln_archs = _arch_list(archs)
        if isinstance(options, str):
            options = options.split()
        self.kiln_options = [str(option) for option in options]
        self.include_sources = bool(include_sources)
        self.py_limited_api = bool(py_limited_api)
        # Archs that [tool.kiln] gives: ``kiln build`` reads them itself,
        # below $CUDAARCHS, so they are not passed as --arch.
        self.kiln_archs_configured = False

    def __repr__(self):
        return f"KernelModule({self.name!r}, {self.kiln_source!r}, archs={self.kiln_archs!r})"

    def runs_as_python(self):
        """Whether the module imports Kiln and so stays Python beside its
        build, a companion extension module (as `kiln build` decides)."""
        return module_imports_kiln(self.kiln_source)


def module_imports_kiln(path):
    """Whether the top level of the module at `path` imports kiln."""
    try:
        with open(path, "rb") as file:
            tree = ast.parse(file.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return False  # kiln build reports what is wrong with it
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            names = [alias.name for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
            names = [statement.module or ""]
        else:
            continue
        if any(name == "kiln" or name.startswith("kiln.") for name in names):
            return True
    return False


def find_kiln():
    """The ``kiln`` command: ``$KILN``, else on ``PATH``, else beside Python."""
    configured = os.environ.get("KILN")
    if configured:
        found = shutil.which(configured)
        if not found:
            raise SetupError(f"$KILN is {configured!r}, which is not an executable")
        return found
    found = shutil.which("kiln")
    if found:
        return found
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "kiln")
    if os.access(beside, os.X_OK) and not os.path.isdir(beside):
        return beside
    raise SetupError(
        "cannot find the kiln command to build kernel modules: set $KILN to it, put it on "
        "PATH, or install Kiln into the build environment (build-system requires = "
        "[\"setuptools\", \"kiln-compiler\"])")


class build_ext(_setuptools_build_ext):
    """setuptools' build_ext, building KernelModule extensions with ``kiln build``."""

    def run(self):
        super().run()
        # Wheels get the built module, not the kernel source it replaces.
        if not self.inplace and not getattr(self, "editable_mode", False):
            self._drop_kernel_sources()

    def get_ext_filename(self, fullname):
        """Where setuptools puts the module `fullname`: for a module that
        stays Python, its companion (`pkg/_kernels.kiln<EXT_SUFFIX>`)."""
        filename = super().get_ext_filename(fullname)
        # setuptools maps both the dotted name and its last part, which
        # get_ext_fullpath asks with.
        ext = getattr(self, "ext_map", {}).get(fullname)
        if not isinstance(ext, KernelModule) or not ext.runs_as_python():
            return filename
        folder, base = os.path.split(filename)
        stem = fullname.rpartition(".")[2]
        return os.path.join(folder, f"_{stem}.kiln{base[len(stem):]}")

    def build_extension(self, ext):
        if not isinstance(ext, KernelModule):
            return super().build_extension(ext)
        return self._build_kernel_module(ext)

    def _kiln_command(self, ext, output_directory, extension_suffix):
        # Source paths recorded relative to the project's folder: wheels
        # built from any checkout, or in pip's temporary folders, are the same.
        project = os.path.abspath(getattr(self.distribution, "src_root", None) or os.curdir)
        command = [find_kiln(), "build", ext.kiln_source, "--module", ext.name,
                   "-o", output_directory, "--python", sys.executable,
                   "--ext-suffix", extension_suffix, "--project-root", project]
        if ext.kiln_archs is not None and not ext.kiln_archs_configured:
            command += ["--arch", ext.kiln_archs]
        # Modules built at once (build_ext -j N) share the cores.
        if self.parallel and self.parallel is not True and int(self.parallel) > 1:
            command += ["-j", str(max(1, (os.cpu_count() or 1) // int(self.parallel)))]
        if self.debug:
            command += ["--lineinfo"]
        if "KILN_REMOTE_CACHE" not in os.environ:
            for remote in remote_caches(os.path.join(project, "pyproject.toml")):
                command += ["--remote-cache", remote]
        return command + ext.kiln_options

    def _build_kernel_module(self, ext):
        if not os.path.isfile(ext.kiln_source):
            raise CompileError(f"kernel module {ext.name!r}: no source file {ext.kiln_source!r}")
        path = self.get_ext_fullpath(ext.name)
        directory = os.path.dirname(path)
        stem = ext.name.rpartition(".")[2]
        suffix = os.path.basename(super().get_ext_filename(ext.name))[len(stem):]
        command = self._kiln_command(ext, directory or ".", suffix)
        log.info("kiln: building kernel module '%s' from %s", ext.name, ext.kiln_source)
        log.debug("%s", " ".join(_quote(part) for part in command))
        if self.dry_run:
            return
        # Alone, Kiln writes straight to our stderr (progress on a terminal,
        # diagnostics); beside other builds (-j), its output is held and
        # printed in one piece.
        parallel = bool(self.parallel) and len(self.extensions) > 1
        try:
            result = subprocess.run(
                command, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if parallel else None, text=True)
        except OSError as error:
            raise CompileError(f"cannot run {command[0]}: {error}") from None
        if result.stderr:
            sys.stderr.write(result.stderr)
            sys.stderr.flush()
        if result.returncode != 0:
            raise CompileError(
                f"kiln could not build kernel module '{ext.name}' from {ext.kiln_source} "
                f"(exit status {result.returncode}); Kiln's diagnostics are above")
        if not os.path.isfile(path):
            written = result.stdout.strip() or "nothing"
            raise CompileError(
                f"kernel module '{ext.name}' was declared but not compiled: {command[0]} "
                f"did not write {path} (it wrote: {written}); is it Kiln's kiln "
                "(the kiln-compiler distribution)?")

    def _drop_kernel_sources(self):
        sources = {os.path.realpath(ext.kiln_source) for ext in self.extensions
                   if isinstance(ext, KernelModule) and not ext.include_sources
                   and not ext.runs_as_python()}
        if not sources:
            return
        build_py = self.get_finalized_command("build_py")
        for package, module, module_file in build_py.find_all_modules():
            if os.path.realpath(module_file) not in sources:
                continue
            built = build_py.get_module_outfile(
                build_py.build_lib, package.split(".") if package else [], module)
            for path in (built, built + "c"):
                if os.path.isfile(path):
                    log.info("kiln: leaving the kernel source %s out of %s", module_file,
                             build_py.build_lib)
                    os.remove(path)


def _quote(text):
    return text if text and all(c.isalnum() or c in "-_./=:+," for c in text) else repr(text)


def _load_toml(path):
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib
        except ImportError:
            from setuptools.compat.py310 import tomllib
    with open(path, "rb") as file:
        return tomllib.load(file)


def _read_pyproject(path):
    return _load_toml(path) if os.path.isfile(path) else {}


def kernel_modules(pyproject="pyproject.toml"):
    """The KernelModule list that ``[tool.kiln] modules`` declares.

    Each entry is a table with ``name``, ``source`` and optionally ``archs``
    (a string or a list), ``options`` (a list of kiln build flags),
    ``include-sources`` and ``py-limited-api`` (see KernelModule);
    ``[tool.kiln] archs`` is the default arch list.
    """
    config = _read_pyproject(pyproject).get("tool", {}).get("kiln", {})
    entries = config.get("modules", [])
    if not isinstance(entries, list):
        raise SetupError(f"{pyproject}: [tool.kiln] modules must be a list of tables")
    modules = []
    for number, entry in enumerate(entries):
        where = f"{pyproject}: [tool.kiln] modules[{number}]"
        if not isinstance(entry, dict) or "name" not in entry or "source" not in entry:
            raise SetupError(f"{where} needs name and source, such as "
                             "{name = \"pkg.kernels\", source = \"pkg/kernels.py\"}")
        unknown = set(entry) - {"name", "source", "archs", "options", "include-sources",
                                "include_sources", "py-limited-api"}
        if unknown:
            raise SetupError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
        module = KernelModule(
            entry["name"], entry["source"], archs=entry.get("archs", config.get("archs")),
            options=entry.get("options", ()),
            include_sources=entry.get("include-sources", entry.get("include_sources", False)),
            py_limited_api=entry.get("py-limited-api", True))
        module.kiln_archs_configured = True
        modules.append(module)
    return modules


def remote_caches(pyproject="pyproject.toml"):
    """The remotes of ``[tool.kiln] remote-cache``: a string of remotes
    separated by spaces, or a list of them, as ``--remote-cache`` takes
    them (``$KILN_REMOTE_CACHE``, when set, wins over them)."""
    value = _read_pyproject(pyproject).get("tool", {}).get("kiln", {}).get("remote-cache", [])
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SetupError(f"{pyproject}: [tool.kiln] remote-cache must be a string or a list of "
                         "strings, such as \"redis://cache.internal:6379|read-only\"")
    return value


def finalize_distribution_options(dist):
    """setuptools hook (entry point ``setuptools.finalize_distribution_options``).

    Adds the kernel modules of ``[tool.kiln] modules`` in ``pyproject.toml``
    to the distribution, and for any distribution with kernel modules uses
    this build_ext and requires ``kiln-runtime`` (unless ``pyproject.toml``
    has a ``[project]`` table, whose ``dependencies`` must then list it). Distributions without
    kernel modules are left alone.
    """
    pyproject = os.path.join(getattr(dist, "src_root", None) or os.curdir, "pyproject.toml")
    modules = kernel_modules(pyproject)
    if modules:
        existing = {ext.name for ext in dist.ext_modules or []}
        dist.ext_modules = list(dist.ext_modules or []) + [
            module for module in modules if module.name not in existing]
    if not any(isinstance(ext, KernelModule) for ext in dist.ext_modules or []):
        return
    current = dist.cmdclass.get("build_ext")
    if current is None or not issubclass(current, build_ext):
        dist.cmdclass["build_ext"] = build_ext
    _tag_stable_abi_wheel(dist)
    if "project" in _read_pyproject(pyproject):
        return  # [project] dependencies are the whole list; setuptools ignores others
    requires = list(getattr(dist, "install_requires", None) or [])
    if not any(str(r).split(";")[0].strip().replace("_", "-").startswith(RUNTIME_REQUIREMENT)
               for r in requires):
        dist.install_requires = requires + [RUNTIME_REQUIREMENT]


#: The wheel tag of a wheel whose only extensions are abi3 kernel modules:
#: they import in every CPython that kiln-runtime supports.
STABLE_ABI_WHEEL_TAG = "cp310"


def _tag_stable_abi_wheel(dist):
    """Tags the wheels of a distribution whose only extensions are abi3
    kernel modules `cp310-abi3`, one wheel for every CPython, unless the
    project says otherwise ([bdist_wheel] py_limited_api in setup.cfg, or
    on the command line, both of which setuptools reads after this)."""
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return  # no stable ABI: the wheel is for this interpreter
    extensions = dist.ext_modules or []
    if not all(isinstance(ext, KernelModule) and ext.py_limited_api for ext in extensions):
        return
    dist.get_option_dict("bdist_wheel").setdefault(
        "py_limited_api", ("kiln.setuptools", STABLE_ABI_WHEEL_TAG))


# After setuptools' own hooks (order 0), which may set cmdclass defaults.
finalize_distribution_options.order = 100
