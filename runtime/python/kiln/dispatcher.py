"""Kernels of a module that stays Python (`from kiln import cuda`): what
`kiln.cuda.jit`, `kiln.vectorize` and `kiln.cuda.reduce` make of its
functions.

    from kiln import cuda

    @cuda.jit
    def scale(out, x, factor):
        ...

    scale[blocks, threads](out, x, 2.0)   # the specialization for these types, then the launch

A lazy kernel is a kernel object (kiln.kernel.Kernel) whose specializations
grow on demand. The first call with argument types it has none for gets one
from the companion `kiln build` wrote beside the module (while the sources
it was built from are unchanged); else, where Kiln's compiler is installed,
from a build of the module in process (kiln._compiler, through the
specialization cache, with every signature asked for so far), which later
processes find kept in the cache folder; else NoSpecializationError names
the kernel, the types and the command that adds them to the build. A kernel
given signatures in its decorator has those alone, as in Numba.
"""

import atexit
import functools
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

from kiln import _overloads, host_values, signature_file
from kiln._sources import CompiledFromSource, function_file, function_source
from kiln._types import descriptor
from kiln._version import VERSION
from kiln._typeof import UntypableArgument, dispatch_descriptor, signature_type
from kiln.kernel import Kernel, entry_signature, specialization_tuple


class NoSpecializationError(TypeError):
    """No specialization for these argument types, and none can be compiled."""


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
    sources = manifest.get("sources")
    if not isinstance(sources, list) or not sources:
        return "the list of sources in its manifest"
    for source in sources:
        if not isinstance(source, dict) or not isinstance(source.get("file"), str):
            return "the list of sources in its manifest"
        path = os.path.normpath(os.path.join(folder, source["file"]))
        try:
            with open(path, "rb") as file:
                digest = hashlib.sha256(file.read()).hexdigest()
        except OSError:
            digest = None
        if digest != source.get("sha256"):
            return path
    return None


class _ModuleBuilds:
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
        if manifest.get("companion_of") is None:
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
            module = self._kept_or_built(signatures, functions, _architecture())
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
                kept = _KeptBuilds.folder(self, signatures, arch,
                                          values + repr(closures) + repr(calls) + repr(functions)
                                          + repr(include_dirs))
                module = self._load_kept(kept) if kept else None
                if module is not None:
                    return module
                try:
                    return self._build(signatures, functions, arch, kept, values, closures, calls,
                                       include_dirs)
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
            builds = self if host_values.is_closure(chosen) else _ModuleBuilds.of_function(chosen)
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
            _KeptBuilds.used(folder)
        return module

    def _build(self, signatures, functions, arch, kept, values, closures, calls, include_dirs):
        """A build made now, for `arch` (None: the CPU engine)."""
        from kiln import _compiler

        if not os.path.exists(self.path):
            raise _compiler.CompileError(
                f"kiln: error: {os.path.basename(self.path)!r} is no file Kiln can read: Kiln compiles "
                "kernels from their source text, which a function exec made from a string has only "
                "if linecache keeps it (as IPython keeps a notebook cell's)")
        # Each build its own folder (a process loads an extension file once),
        # then kept for the processes that follow.
        output = _KeptBuilds.scratch()
        [extension] = _compiler.build_module(
            self.path, output, module_name=self.module_name, arch=arch, host_only=arch is None,
            signatures=signatures, module_stays_python=True, host_values=values,
            closures=closures, decorator_calls=calls, functions=functions,
            link_include_dirs=include_dirs)
        module = _load_extension(companion_names(self.module_name)[0], extension)
        if kept:
            _KeptBuilds.keep(extension, kept)
        return module


def link_include_dirs():
    """The folders searched for `#include <...>` in the CUDA C/C++ files
    kernels link: `kiln.cuda.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS`, a
    colon-separated list, as Numba's setting of that name."""
    from kiln.cuda import config

    return [folder for folder in config.CUDA_NVRTC_EXTRA_SEARCH_PATHS.split(":") if folder]


# How many times a build is made again for the overloads the one before
# could not resolve: an implementation may call overloaded functions too.
_OVERLOAD_ROUNDS = 8


class _KeptBuilds:
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


def _require_top_level(py_func, kind):
    """Ufuncs and reductions are compiled from the functions a module
    defines at its top level, or in its functions (closures); one defined in
    a class cannot be found there."""
    if py_func.__qualname__ != py_func.__name__:
        where = host_values.enclosing_name(py_func)
        raise NotImplementedError(
            f"{kind} '{py_func.__name__}' is defined inside '{where}': Kiln compiles the {kind}s a "
            "module defines at its top level or inside its functions, not in classes. Move "
            f"it to the top level of {py_func.__module__}")


def _closure_needs_the_compiler(kind, py_func):
    """The error for a closure called where Kiln's compiler is not installed."""
    where = host_values.enclosing_name(py_func)
    return NoSpecializationError(
        f"{kind} '{py_func.__name__}' is defined inside '{where}', and Kiln compiles such a closure when "
        "it is first called, with the values it closes over: that needs Kiln's compiler, which is not "
        f"installed. To precompile the {kind}, make it when {py_func.__module__} is imported (a module "
        "global), or define it at the top level and pass those values as arguments")


def _architecture():
    """What to compile for in development: the GPU kernels will run on, or
    None for the CPU engine, which needs host code alone."""
    from kiln import _runtime

    if _runtime.target() == "cuda":
        major, minor = _runtime.device_info()["compute_capability"]
        return f"{major}{minor}"
    return None


def _compiler_available():
    """Whether Kiln's compiler is installed (without loading it: LLVM is big)."""
    try:
        return importlib.util.find_spec("kiln._compiler") is not None
    except (ImportError, ValueError):
        return False


class LazyKernel(Kernel, CompiledFromSource):
    """A @cuda.jit kernel of a module that stays Python: a kernel object
    (kiln.kernel.Kernel, the C dispatcher) whose specializations grow on
    demand. A launch whose argument types none of them takes exactly asks
    `_specialize`, which adds one, precompiled or compiled now; every other
    launch costs what a built module's kernel's does. A kernel given
    signatures in its decorator has those alone and converts arguments to
    them, as Numba's does."""

    def __init__(self, py_func, signatures, options, built_name):
        code = py_func.__code__
        self._arg_names = code.co_varnames[:code.co_argcount]
        super().__init__(py_func.__name__, [], arg_names=self._arg_names, module=py_func.__module__,
                         exact=not signatures, arity=code.co_argcount)
        self._py_func = py_func
        self.__module__ = py_func.__module__
        self.__qualname__ = py_func.__qualname__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self.options = dict(options)
        self._declared = list(signatures)
        self._builds = _ModuleBuilds.of_function(py_func)
        # What the build calls it: its name, or, for a closure, a name of its own.
        self._built_name = built_name
        self._compiled = {}  # signature text -> the built module's kernel
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<kiln kernel {self.__qualname__!r} of {self.__module__!r}>"

    @property
    def py_func(self):
        return self._py_func

    @property
    def built_name(self):
        """The name the module's build compiles the kernel under."""
        return self._built_name

    specialized = False

    def specialize(self, *args):
        """A kernel object holding the specialization for the types of
        `args` alone (compiled now if need be), which compiles nothing more,
        as Numba's specialized dispatcher."""
        index = self[1, 1].prepare(*args)
        return self._alone(self._members[index])

    @property
    def definition(self):
        """The kernel object of the one specialization there is."""
        if len(self._members) != 1:
            raise TypeError(f"kernel '{self.__name__}' has {len(self._members)} specializations; "
                            "definition needs exactly one (see definitions)")
        return self._alone(self._members[0])

    @property
    def definitions(self):
        """Signature text -> a kernel object holding that specialization alone."""
        return {entry_signature(member[2]): self._alone(member) for member in self._members}

    def _alone(self, member):
        kernel = Kernel(self.__name__, [member], self._arg_names, self.__module__)
        kernel.specialized = True
        return kernel

    # --- What the compiler makes of it, as Numba's dispatcher shows ---------

    def inspect_types(self, file=None):
        """Prints the typed IR of each specialization (Kiln's typed IR, where
        Numba prints its own typed source)."""
        blocks = self._inspect("typed").split("\n\n")
        shown = [block for block in blocks if f" name('{self._built_name}')" in block.split("\n", 1)[0]]
        print("\n\n".join(shown), file=file)

    def inspect_llvm(self, signature=None):
        """{signature: LLVM IR} of each specialization (or the IR of one),
        for the GPU kernels run on, else sm_80."""
        return self._per_signature(self._inspect("llvm"), signature)

    def inspect_asm(self, signature=None):
        """{signature: PTX} of each specialization (or the PTX of one)."""
        return self._per_signature(self._inspect("ptx"), signature)

    def get_regs_per_thread(self, signature=None):
        """Registers per thread, as ptxas reports them."""
        return self._resource("registers", signature)

    def get_shared_mem_per_block(self, signature=None):
        """Bytes of static shared memory per block."""
        return self._resource("shared_bytes", signature)

    def get_local_mem_per_thread(self, signature=None):
        """Bytes of local memory per thread (the stack, spills)."""
        return self._resource("local_bytes", signature)

    def _inspect(self, what):
        if not _compiler_available():
            raise RuntimeError(f"kernel '{self.__name__}': inspecting what a kernel compiles to needs "
                               "Kiln's compiler, which is not installed")
        from kiln import _compiler

        asked = [f"{self._built_name}={signature}" for signature in self._compiled]
        with tempfile.TemporaryDirectory(prefix="kiln-inspect-") as folder:
            return _compiler.inspect(self._builds.path, what, folder, module_name=self._builds.module_name,
                                     arch=_architecture() or "80", signatures=asked, module_stays_python=True,
                                     host_values=self._builds.live_host_values(),
                                     closures=self._builds.closure_requests(),
                                     decorator_calls=self._builds.decorator_calls(),
                                     functions=[self._built_name])

    def _per_signature(self, rows, signature):
        held = set(self.signatures)
        found = {}
        for (name, args, _), value in rows:
            text = "(" + ", ".join(args) + ")"
            if name == self._built_name and text in held:
                found[text] = value
        if signature is None:
            return found
        if signature not in found:
            raise ValueError(f"kernel '{self.__name__}' has no specialization {signature}; it has: "
                             f"{', '.join(found) or 'none'}")
        return found[signature]

    def _resource(self, key, signature):
        rows = [(spec, usage[key]) for spec, usage in self._inspect("resources")]
        return self._per_signature(rows, signature)

    # --- Specializations ----------------------------------------------------

    def _specialize(self, args):
        """Called by the dispatcher when none of the specializations takes
        `args`: adds the one that does, precompiled or compiled now, and
        says whether it added any."""
        with self._lock:
            if self._declared:
                if self._members:
                    return False  # the declared signatures are all there is
                self._adopt_declared()
                return True
            signature = self._signature_of(args)
            precompiled = self._precompiled()
            if precompiled is not None and self._takes_exactly(precompiled, args):
                self._adopt(precompiled)
            else:
                kernel = self._compiled.get(signature)
                if kernel is None:
                    kernel = self._compiled[signature] = self._compile(signature)
                self._adopt(kernel)
        name = self._module_global_name()
        if name is not None:
            signature_file.record(f"{self._builds.module_name}.{name}", signature)
        return True

    @property
    def overloads(self):
        """Signature -> a kernel object holding that specialization alone. A
        kernel given signatures in its decorator has theirs from the first
        time it is asked, as Numba compiles them when it decorates."""
        with self._lock:
            if self._declared and not self._members:
                self._adopt_declared()
        return super().overloads

    def _adopt_declared(self):
        """Adds the specializations of the decorator's signatures."""
        precompiled = self._precompiled()
        self._adopt(precompiled if precompiled is not None else self._compile(None))

    def _module_global_name(self):
        """The module global that names this kernel, as a build knows it: its
        name, or, for a closure a kernel factory made at import, the global
        it was bound to; None for a closure made later, which no build can
        hold."""
        if not host_values.is_closure(self._py_func):
            return self.__name__
        module = sys.modules.get(self.__module__)
        for name, value in list(vars(module).items()) if module is not None else ():
            if value is self:
                return name
        return None

    def _precompiled(self):
        """The kernel the companion holds, if a build can hold this one."""
        name = self._module_global_name()
        return None if name is None else self._builds.precompiled(name)

    def _adopt(self, kernel):
        """Adds the specializations of a built module's kernel to this one's."""
        known = {entry_signature(entry) for _, _, entry in self._members}
        added = [member for member in kernel._members if entry_signature(member[2]) not in known]
        if added:
            self._members = self._members + added
            self._replace([specialization_tuple(*member) for member in self._members])

    @staticmethod
    def _takes_exactly(kernel, args):
        try:
            wanted = tuple(dispatch_descriptor(value, f"argument {i + 1}") for i, value in enumerate(args))
        except UntypableArgument:
            return False
        return any(tuple(map(descriptor, entry["args"])) == wanted for entry in kernel._entries)

    def _signature_of(self, args):
        try:
            types = [signature_type(value, f"argument {i + 1}") for i, value in enumerate(args)]
        except UntypableArgument as error:
            raise TypeError(f"kernel '{self.__name__}': {error}") from None
        return f"void({', '.join(types)})"

    def _qualified_name(self):
        """`pkg.kernels.scale`: the key of the signatures file."""
        return f"{self._builds.module_name}.{self._module_global_name()}"

    def _compile(self, signature):
        """The kernel object holding a specialization for `signature` (None:
        for the decorator's signatures)."""
        if not _compiler_available():
            if self._module_global_name() is None:
                raise _closure_needs_the_compiler("kernel", self._py_func)
            if self._builds.stale is not None:
                raise self._builds.cannot_rebuild("kernel", self.__name__)
            if signature is None:
                raise NoSpecializationError(
                    f"kernel '{self.__name__}' cannot be compiled: Kiln's compiler is not installed. "
                    "Build the module with `kiln build` and import the built module")
            raise NoSpecializationError(
                f"kernel '{self.__name__}' has no specialization for {signature[4:]}, and Kiln's "
                "compiler is not installed to compile one. Add it to the package's build, and "
                "rebuild the package:\n"
                f"    kiln signatures add {self._qualified_name()} '{signature}'")
        request = None if signature is None else f"{self._built_name}={signature}"
        return getattr(self._builds.module_with(self._built_name, request), self._built_name)


class DeviceFunction(CompiledFromSource):
    """A @cuda.jit(device=True) function: kernels of its module call it; Python
    cannot (as with Numba's CUDA target)."""

    def __init__(self, py_func, built_name):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.built_name = built_name

    def __repr__(self):
        return f"<kiln device function {self.__qualname__!r} of {self.__module__!r}>"

    def __call__(self, *args, **kwargs):
        raise TypeError(f"device function '{self.__name__}' can be called only from kernels and "
                        "other device functions")


class BuiltOnFirstCall:
    """A @vectorize ufunc or @cuda.reduce reduction of a module that stays
    Python. Both are compiled for the signatures their decorators give (a
    reduction without any, for Kiln's default dtypes), so the first call
    takes the built one, precompiled in the companion `kiln build` wrote or
    else compiled now, and every call goes to it."""

    def __init__(self, py_func, kind):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self._kind = kind
        self._builds = _ModuleBuilds.of_function(py_func)
        self._built = None

    def __repr__(self):
        return f"<kiln {self._kind} {self.__qualname__!r} of {self.__module__!r}>"

    def _target(self):
        if self._built is None:
            if host_values.is_closure(self.py_func):
                # Compiled on its first call, with what it closes over, as
                # kernels defined inside functions are.
                name = self._builds.closure_name(self.py_func)
                if not _compiler_available():
                    raise _closure_needs_the_compiler(self._kind, self.py_func)
                self._built = getattr(self._builds.module_with(name), name)
                return self._built
            _require_top_level(self.py_func, self._kind)
            built = self._builds.precompiled(self.__name__)
            if built is None:
                if not _compiler_available():
                    raise self._builds.cannot_rebuild(self._kind, self.__name__)
                built = getattr(self._builds.module_with(self.__name__), self.__name__)
            self._built = built
        return self._built

    def __call__(self, *args, **kwargs):
        return self._target()(*args, **kwargs)

    def __getattr__(self, name):
        # ufunc.nin, .types, .reduce ...: the built object's
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._target(), name)


def vectorize(signatures=None, target="cuda", **options):
    """@vectorize(["float32(float32, float32)"], target="cuda"): a ufunc."""
    del signatures, target, options  # the compiler reads the decorator from the source

    def decorate(py_func):
        return BuiltOnFirstCall(py_func, "ufunc")

    return decorate


def reduce(function):
    """@cuda.reduce: a reduction, called as Numba's: r(array, size=None, res=None, init=0, stream=0)."""
    return BuiltOnFirstCall(function, "reduction")


class DeclaredDeviceFunction:
    """`cuda.declare_device(name, sig, link=None)`: a device function
    implemented in CUDA C/C++ or PTX. The compiler reads the declaration
    from the source and links the files `link=` names; here it is a name
    only kernels can call."""

    def __init__(self, name, sig, link=None, use_cooperative=False, abi="numba"):
        if abi not in ("numba", "c"):
            raise NotImplementedError(f"Unsupported ABI: {abi}")
        text = _signature_text(sig)
        if text.startswith("("):
            raise TypeError("Return type must be provided for device declarations")
        self.name = name
        self.sig = _numba_signature(sig)
        self.signature_text = text
        self.link = link
        self.use_cooperative = use_cooperative
        self.abi = abi

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name!r} is a device function implemented in CUDA C/C++ or PTX "
                        "(cuda.declare_device): only kernels and device functions can call it")

    def __repr__(self):
        return f"<declared device function {self.name!r} {self.sig}>"


def _numba_signature(signature):
    """Numba's Signature object of a signature string, as numba-cuda's
    declarations hold it (`decl.sig.args`), where the process has imported
    Numba; the string itself elsewhere."""
    if not isinstance(signature, str) or "numba" not in sys.modules:
        return signature
    try:
        from numba.core import sigutils

        args, return_type = sigutils.normalize_signature(signature)
    except Exception:  # Numba's errors about a signature Kiln reads itself
        return signature
    return return_type(*args)


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    return DeclaredDeviceFunction(name, sig, link, use_cooperative, abi)


def _type_text(numba_type):
    """A Numba type object in signature-string syntax: arrays as
    `float32[:, ::1]`, records as numba.types.Record(...) makes them, every
    other type as Numba prints it."""
    if all(hasattr(numba_type, field) for field in ("fields", "size", "aligned")):
        fields = ", ".join(f"({name!r}, {{'type': {_type_text(field.type)}, 'offset': {field.offset}}})"
                           for name, field in numba_type.fields.items())
        return f"Record([{fields}], {numba_type.size}, {numba_type.aligned})"
    if all(hasattr(numba_type, field) for field in ("dtype", "shape", "layout")):
        return f"NestedArray({_type_text(numba_type.dtype)}, {tuple(numba_type.shape)})"
    if type(numba_type).__name__ in ("CharSeq", "UnicodeCharSeq"):
        return f"{type(numba_type).__name__}({numba_type.count})"
    if type(numba_type).__name__ == "UniTuple":
        return f"UniTuple({_type_text(numba_type.dtype)}, {numba_type.count})"
    if type(numba_type).__name__ == "CPointer":
        return f"CPointer({_type_text(numba_type.dtype)})"
    if type(numba_type).__name__ in ("NPDatetime", "NPTimedelta"):
        return f"{type(numba_type).__name__}({numba_type.unit!r})"
    if all(hasattr(numba_type, field) for field in ("dtype", "ndim", "layout")):
        dimensions = [":"] * numba_type.ndim
        if dimensions and numba_type.layout == "C":
            dimensions[-1] = "::1"
        elif dimensions and numba_type.layout == "F":
            dimensions[0] = "::1"
        return f"{_type_text(numba_type.dtype)}[{', '.join(dimensions)}]"
    return str(numba_type)


def _signature_text(signature):
    """A signature as the compiler parses it: a string as given; Numba's
    signature objects (`void(float32[:])`) and tuples of argument types
    written out, the latter without a return type, which the compiler infers
    as Numba does (`(float64, float64)` for a device function)."""
    if isinstance(signature, str):
        return signature
    if hasattr(signature, "args") and hasattr(signature, "return_type"):
        result = "void" if str(signature.return_type) == "none" else _type_text(signature.return_type)
        return f"{result}({', '.join(map(_type_text, signature.args))})"
    if isinstance(signature, tuple):
        return f"({', '.join(map(_type_text, signature))})"
    return _type_text(signature)


def _decorator_call(signatures, device, options):
    """The text of the jit call that makes a function what it is, for the
    compiler to read as the function's decorator when the source has none
    (`kernel = cuda.jit(f)`): `jit(["void(float32[:])"], fastmath=True)`."""
    arguments = []
    if signatures:
        arguments.append(repr([_signature_text(signature) for signature in signatures]))
    if device:
        arguments.append("device=True")
    arguments += [f"{name}={value!r}" for name, value in sorted(options.items())]
    return f"jit({', '.join(arguments)})"


def _made(py_func, signatures, device, options):
    builds = _ModuleBuilds.of_function(py_func)
    name = builds.called(py_func, _decorator_call(signatures, device, options))
    return DeviceFunction(py_func, name) if device else LazyKernel(py_func, signatures, options, name)


def jit(func_or_signature=None, device=False, **options):
    """@cuda.jit, @cuda.jit(), @cuda.jit("void(float32[:])"), @cuda.jit(device=True), ...

    Arguments are Numba's. The compiler reads the decorator from the source,
    so options take effect as Numba defines them; a function the source does
    not decorate (`kernel = cuda.jit(f)`) compiles as this call makes it."""
    if callable(func_or_signature) and not isinstance(func_or_signature, (str, list, tuple)):
        return _made(func_or_signature, [], device, options)
    if func_or_signature is None:
        signatures = []
    elif isinstance(func_or_signature, list):
        signatures = list(func_or_signature)
    else:
        signatures = [func_or_signature]

    def decorate(py_func):
        return _made(py_func, signatures, device, options)

    return decorate

