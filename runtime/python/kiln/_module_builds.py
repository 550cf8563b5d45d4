"""What has been built of the source modules of lazy kernels: the companion
`kiln build` wrote beside a module, builds made in process by kiln._compiler
(every signature asked for so far, resolving the overloads a build asks
for), and builds kept in the cache folder for later processes."""

import atexit
import hashlib
import importlib.machinery
import importlib.util
import itertools
import json
import os
import pathlib
import shutil
import sys
import tempfile
import threading

from kiln import _manifest, _overloads, host_values
from kiln._sources import function_file, function_source
from kiln._version import VERSION


class NoSpecializationError(TypeError):
    """No specialization for these argument types, and none can be compiled."""

    __module__ = "kiln.dispatcher"  # where users import it from


def companion_names(module_name):
    """`pkg.kernels` -> ("_kernels_kiln", "_kernels.kiln"): the name of the
    extension module `kiln build` makes of a module that stays Python, and
    its file name before EXT_SUFFIX (pipeline/module_writer.h spells the
    same rule)."""
    last = module_name.rpartition(".")[2]
    return f"_{last}_kiln", f"_{last}.kiln"


def _load_extension(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stale_source(folder, manifest):
    """The first source file the companion was built from that is no longer
    as it was (or a description of a list that cannot be read), or None."""
    sources = _manifest.companion_sources(manifest)
    if sources is None:
        return "the list of sources in its manifest"
    for item in sources:
        source = _manifest.companion_source(item)
        if source is None:
            return "the list of sources in its manifest"
        relative, sha256 = source
        path = os.path.normpath(os.path.join(folder, relative))
        try:
            with open(path, "rb") as file:
                digest = hashlib.sha256(file.read()).hexdigest()
        except OSError:
            digest = None
        if digest != sha256:
            return path
    return None


class ModuleBuilds:
    """The source module of some kernels, and what has been built of it: the
    companion `kiln build` wrote beside it, and builds made in development.

    Every build in development compiles the whole module with every
    signature asked for so far, so one extension module holds every
    specialization in use; the cache makes the kernels already compiled
    cost little.
    """

    _by_file = {}
    _registry_lock = threading.Lock()

    @classmethod
    def of(cls, path, module_name):
        with cls._registry_lock:
            builds = cls._by_file.get(path)
            if builds is None:
                builds = cls._by_file[path] = cls(path, module_name)
            return builds

    @classmethod
    def of_function(cls, py_func):
        """The builds of the module `py_func` is defined in (see
        kiln._sources: a source file, or a text written out as one)."""
        source = function_source(py_func)
        if source.written_globals is None:
            return cls.of(source.path, source.module_name)
        with cls._registry_lock:
            builds = cls._by_file.get(source.path)
            if builds is None:
                builds = cls._by_file[source.path] = cls(source.path, source.module_name)
                builds.globals = source.written_globals
            return builds

    def __init__(self, path, module_name):
        self.path = path
        self._imported_as = module_name
        # A function exec made may have no module at all.
        name = pathlib.Path(path).stem if module_name in ("__main__", None) else module_name
        # A script's file name need not be a module name; its builds need one.
        self.module_name = name if all(part.isidentifier() for part in name.split(".")) else "kernels"
        self.lock = threading.RLock()
        self.signatures = []  # "kernel=void(...)", in the order asked for
        self.functions = set()  # the kernels, ufuncs and reductions built
        self.module = None
        # name -> function: the closures (functions defined inside
        # functions) compiled with the module, each under a name of its own.
        self.closures = {}
        self._closure_names = {}  # host_values.closure_key(function) -> name
        # name -> ("jit(...)", line): functions host code made kernels or
        # device functions by calling jit on them, compiled as if so
        # decorated; line, for a function jitted again in another way, where
        # it is defined (it is compiled again under the name), else 0.
        self.called_decorators = {}
        # The globals of a module with no file of its own (of_function).
        self.globals = None
        self._companion = None
        self._companion_read = False
        # Why the companion beside the source cannot serve, if it cannot.
        self.stale = None

    def companion(self):
        """The companion extension module `kiln build` wrote beside the
        source, if there is one and the source files it was built from are
        unchanged; else None (and `stale` says why, if one is there)."""
        with self.lock:
            if not self._companion_read:
                self._companion = self._read_companion()
                self._companion_read = True
            return self._companion

    def _read_companion(self):
        stem = companion_names(self.module_name)[1]
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(os.path.dirname(self.path), stem + suffix)
            if os.path.exists(path):
                module, self.stale = self._load_build(path)
                return module
        return None

    def _load_build(self, path):
        """(the build of this module at `path`, None) while the sources it
        was built from are unchanged, else (None, why not). A damaged file
        raises ImportError, naming it."""
        module = _load_extension(companion_names(self.module_name)[0], path)
        manifest = module.__kiln_manifest__
        if _manifest.companion_of(manifest) is None:
            return None, f"{path} is not the build of a module that stays Python"
        changed = _stale_source(os.path.dirname(self.path), manifest)
        if changed is not None:
            return None, f"{changed} changed after {os.path.basename(path)} was built from it"
        return module, None

    def precompiled(self, name):
        """What the companion holds under `name`, if it serves."""
        companion = self.companion()
        return getattr(companion, name, None) if companion is not None else None

    def cannot_rebuild(self, kind, name):
        """The error for a function whose companion cannot serve where
        there is no compiler to build it again."""
        why = self.stale or "the package was built without it"
        return NoSpecializationError(
            f"{kind} '{name}' cannot run: {why}, and Kiln's compiler is not installed to compile "
            f"it again. Rebuild the package (or run `kiln build {self.path}`)")

    def module_with(self, name, signature=None):
        """The latest build if it holds the function the build calls `name`
        and `signature` ("name=void(...)"; None: only the decorators'
        signatures), else one that adds them: kept from an earlier process,
        or built now. A build compiles only the kernels asked for so far,
        so that one that does not compile fails only the calls that need
        it, as with Numba."""
        with self.lock:
            if (self.module is not None and name in self.functions
                    and (signature is None or signature in self.signatures)):
                return self.module
            signatures = self.signatures + ([signature] if signature else [])
            functions = sorted(self.functions | {name})
            module = self._kept_or_built(signatures, functions, development_architecture())
            self.signatures = signatures
            self.functions.add(name)
            self.module = module
            return module

    def _kept_or_built(self, signatures, functions, arch):
        """The build of `signatures` and `functions`: kept from an earlier
        process, or made now. A build that names calls of overloaded
        functions it could not resolve is made again once they are."""
        before = None  # what resolving overloads adds, taken back if no build comes of it
        try:
            for round_number in range(1, _OVERLOAD_ROUNDS + 1):
                values = self.live_host_values()
                closures = self.closure_requests()
                calls = self.decorator_calls()
                include_dirs = link_include_dirs()
                switchable = index_checks_switchable()
                kept = KeptBuilds.folder(self, signatures, arch,
                                          values + repr(closures) + repr(calls) + repr(functions)
                                          + repr(include_dirs) + repr(switchable))
                module = self._load_kept(kept) if kept else None
                if module is not None:
                    return module
                try:
                    return self._build(signatures, functions, arch, kept, values, closures, calls,
                                       include_dirs, switchable)
                except Exception as error:
                    requests = getattr(error, "overload_requests", ())
                    if not requests or round_number == _OVERLOAD_ROUNDS:
                        raise
                if before is None:
                    before = (dict(self.closures), dict(self._closure_names), dict(self.called_decorators))
                self._resolve_overloads(requests)
        except BaseException:
            if before is not None:
                self.closures, self._closure_names, self.called_decorators = before
            raise

    def _resolve_overloads(self, requests):
        """Resolves each (module path, key, argument types, [types]) a build
        asked for (see kiln._overloads): the overload's typing function
        chooses the implementation, which is compiled as a device function."""
        for _path, key, argument_types, arguments in requests:
            chosen = _overloads.implementation(key, argument_types, arguments)
            builds = self if host_values.is_closure(chosen) else ModuleBuilds.of_function(chosen)
            name = builds.called(chosen, "jit(device=True)")
            _overloads.resolved(key, argument_types, function_file(chosen), name)

    def closure_name(self, py_func, variant=None):
        """The name a closure is compiled under in this module's builds: one
        per code and values closed over (host_values.closure_key), as
        Numba freezes each closure with its own values, and `variant` (the
        call of jit that made it a kernel or device function)."""
        key = (host_values.closure_key(py_func), variant)
        with self.lock:
            name = self._closure_names.get(key)
            if name is None:
                name = f"{py_func.__code__.co_name}__closure{len(self.closures)}"
                self._closure_names[key] = name
                self.closures[name] = py_func
            return name

    def live_host_values(self):
        """The JSON of the globals the running module (and the loaded
        modules of its package) computed at import, and of the closures'
        free variables, for the compiler to freeze into kernels that read
        them."""
        path = os.path.realpath(self.path)
        if self.globals is not None:
            values = {path: host_values.module_values(self.globals, path)}
        else:
            module = sys.modules.get(self._imported_as)
            values = host_values.package_values(module) if module is not None else {}
        encoded = set()
        # Encoding a closure may add the closures it calls. A closure a
        # factory of another module made reads that module's values.
        while len(encoded) < len(self.closures):
            for name, py_func in list(self.closures.items()):
                if name not in encoded:
                    encoded.add(name)
                    closure_path = function_file(py_func)
                    host_values.encode_free_variables(
                        name, py_func, closure_path, values.setdefault(closure_path, {}),
                        lambda inner, _: self.closure_name(inner))
        methods = _overloads.method_values()
        if methods:
            values["@methods"] = methods
        return json.dumps(values)

    def called(self, py_func, call):
        """The name the build compiles `py_func` (a function of this module)
        under, made what `call` ("jit(device=True)") makes it. A function
        jitted again in another way is compiled again under a name of its
        own, as Numba makes a dispatcher of each."""
        with self.lock:
            line = 0
            if host_values.is_closure(py_func):
                name = self.closure_name(py_func)
                if self.called_decorators.get(name, (call, 0))[0] != call:
                    name = self.closure_name(py_func, call)  # jitted again in another way
            else:
                # The name its `def` gives it, which host code may have changed.
                name = py_func.__code__.co_name
                if self.called_decorators.get(name, (call, 0))[0] != call:
                    line = py_func.__code__.co_firstlineno
                    again = sum(1 for _, at in self.called_decorators.values() if at)
                    name = f"{name}__jit{again}"
            self.called_decorators[name] = (call, line)
            return name

    @classmethod
    def decorator_calls(cls):
        """(module path, function, call) of every function made a kernel or
        device function by a call of jit, in any module: a kernel may call a
        device function of a sibling module made so."""
        with cls._registry_lock:
            every = list(cls._by_file.values())
        return sorted((os.path.realpath(builds.path), name, call, line)
                      for builds in every for name, (call, line) in list(builds.called_decorators.items()))

    def closure_requests(self):
        """(module path, name, first line, free variables, enclosing
        function) of each closure, as kiln._compiler takes them."""
        return [(function_file(py_func), name, py_func.__code__.co_firstlineno,
                 list(py_func.__code__.co_freevars), host_values.enclosing_name(py_func))
                for name, py_func in self.closures.items()]

    def _load_kept(self, folder):
        """The build an earlier process kept in `folder`, if it is there and
        the sources it was built from are unchanged."""
        path = os.path.join(folder, companion_names(self.module_name)[1] +
                            importlib.machinery.EXTENSION_SUFFIXES[0])
        if not os.path.exists(path):
            return None
        try:
            module, _ = self._load_build(path)
        except ImportError:
            return None  # damaged: built again, and replaced
        if module is not None:
            KeptBuilds.used(folder)
        return module

    def _build(self, signatures, functions, arch, kept, values, closures, calls, include_dirs,
               switchable):
        """A build made now, for `arch` (None: the CPU engine)."""
        from kiln import _compiler

        if not os.path.exists(self.path):
            raise _compiler.CompileError(
                f"kiln: error: {os.path.basename(self.path)!r} is no file Kiln can read: Kiln compiles "
                "kernels from their source text, which a function exec made from a string has only "
                "if linecache keeps it (as IPython keeps a notebook cell's)")
        # Each build its own folder (a process loads an extension file once),
        # then kept for the processes that follow.
        output = KeptBuilds.scratch()
        [extension] = _compiler.build_module(
            self.path, output, module_name=self.module_name, arch=arch, host_only=arch is None,
            signatures=signatures, module_stays_python=True, host_values=values,
            closures=closures, decorator_calls=calls, functions=functions,
            link_include_dirs=include_dirs, switchable_index_checks=switchable)
        module = _load_extension(companion_names(self.module_name)[0], extension)
        if kept:
            KeptBuilds.keep(extension, kept)
        return module


def link_include_dirs():
    """The folders searched for `#include <...>` in the CUDA C/C++ files
    kernels link: `kiln.cuda.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS`, a
    colon-separated list, as Numba's setting of that name."""
    from kiln.cuda import config

    return [folder for folder in config.CUDA_NVRTC_EXTRA_SEARCH_PATHS.split(":") if folder]


def index_checks_switchable():
    """Whether builds made in this process give the CPU engine each kernel's
    code with and without index checks: where KILN_CPU_BOUNDSCHECK or
    NUMBA_BOUNDSCHECK asks the engine to choose (as the engine reads them),
    so that the copy asked for is there; otherwise the one each kernel's
    boundscheck option names is enough."""
    return any(os.environ.get(name) in ("0", "1")
               for name in ("KILN_CPU_BOUNDSCHECK", "NUMBA_BOUNDSCHECK"))


# How many times a build is made again for the overloads the one before
# could not resolve: an implementation may call overloaded functions too.
_OVERLOAD_ROUNDS = 8


class KeptBuilds:
    """Builds made in development, kept in Kiln's cache folder
    (`<cache>/modules/<key>/`) so that the next process's first call loads
    one instead of compiling: keyed by the module, its signatures, the
    architecture, the compiler and the values of the globals host code
    computed, and used only while the sources the manifest lists are
    unchanged. The most recently used LIMIT are kept."""

    LIMIT = 256
    _scratch = None
    _counter = itertools.count()

    @staticmethod
    def root():
        """`<cache>/modules`, as the compiler places its cache; None when
        the cache is off (KILN_CACHE=0)."""
        if os.environ.get("KILN_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
            return None
        cache = os.environ.get("KILN_CACHE_DIR")
        if not cache:
            xdg = os.environ.get("XDG_CACHE_HOME")
            cache = os.path.join(xdg, "kiln") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "kiln")
        return os.path.join(cache, "modules")

    @classmethod
    def folder(cls, builds, signatures, arch, values):
        root = cls.root()
        spec = importlib.util.find_spec("kiln._compiler")
        if root is None or spec is None or spec.origin is None:
            return None
        compiler = os.stat(spec.origin)
        key = "\0".join([VERSION, spec.origin, str(compiler.st_size), str(compiler.st_mtime_ns),
                          builds.path, builds.module_name, arch or "host",
                          hashlib.sha256(values.encode()).hexdigest(), *sorted(signatures)])
        return os.path.join(root, hashlib.sha256(key.encode()).hexdigest()[:32])

    @classmethod
    def scratch(cls):
        """A new folder for one build."""
        if cls._scratch is None:
            cls._scratch = tempfile.mkdtemp(prefix="kiln-dev-")
            atexit.register(shutil.rmtree, cls._scratch, ignore_errors=True)
        return os.path.join(cls._scratch, str(next(cls._counter)))

    @classmethod
    def keep(cls, extension, folder):
        """Copies a build into `folder`, whole or not at all; a cache that
        cannot be written only loses the next process its head start."""
        try:
            os.makedirs(folder, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            with os.fdopen(handle, "wb") as target, open(extension, "rb") as source:
                shutil.copyfileobj(source, target)
            os.chmod(temporary, 0o755)
            os.replace(temporary, os.path.join(folder, os.path.basename(extension)))
            cls._trim(os.path.dirname(folder))
        except OSError:
            pass

    @staticmethod
    def used(folder):
        try:
            os.utime(folder)
        except OSError:
            pass

    @classmethod
    def _trim(cls, root):
        try:
            folders = [entry for entry in os.scandir(root) if entry.is_dir() and not entry.name.startswith(".")]
        except OSError:
            return
        if len(folders) <= cls.LIMIT:
            return
        folders.sort(key=lambda entry: entry.stat().st_mtime_ns)
        for entry in folders[:len(folders) - cls.LIMIT]:
            shutil.rmtree(entry.path, ignore_errors=True)


def development_architecture():
    """What to compile for in development: the GPU kernels will run on, or
    None for the CPU engine, which needs host code alone."""
    from kiln import _runtime

    if _runtime.target() == "cuda":
        major, minor = _runtime.device_info()["compute_capability"]
        return f"{major}{minor}"
    return None
