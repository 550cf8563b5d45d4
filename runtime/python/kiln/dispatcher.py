"""Kernels specialized on demand: what `kiln.cuda.jit` makes of a function in a
module that runs as Python source (in development, before any build).

    from kiln import cuda

    @cuda.jit
    def scale(out, x, factor):
        ...

    scale[blocks, threads](out, x, 2.0)   # compiles scale for these types, then launches

A call with argument types the kernel has not met compiles its module, in
process (kiln._compiler, the pipeline `kiln build` runs, through the same
specialization cache), with every signature its kernels have asked for so
far, and launches the specialization through the runtime, as a built module
would. A kernel given signatures in its decorator is compiled for those when
it is defined, and only for those, as Numba does. Without Kiln's compiler
(`kiln-runtime` alone), a call the built module does not cover raises
NoSpecializationError, naming the kernel, the types and how to add them.
"""

import atexit
import functools
import importlib.util
import itertools
import os
import pathlib
import shutil
import tempfile
import threading

from kiln import signature_file
from kiln._typeof import UntypableArgument, signature_type, type_key


class NoSpecializationError(TypeError):
    """No specialization for these argument types, and none can be compiled."""


class _ModuleBuilds:
    """The source module of some kernels, and what has been built of it.

    Every build compiles the whole module with every signature asked for so
    far, so one extension module holds every specialization in use; the
    cache makes the kernels already compiled cost little.
    """

    _by_file = {}
    _registry_lock = threading.Lock()
    _counter = itertools.count()
    _work = None

    @classmethod
    def of(cls, path):
        with cls._registry_lock:
            builds = cls._by_file.get(path)
            if builds is None:
                builds = cls._by_file[path] = cls(path)
            return builds

    def __init__(self, path):
        self.path = path
        self.lock = threading.RLock()
        self.signatures = []  # "kernel=void(...)", in the order asked for
        self.module = None

    @classmethod
    def _output_folder(cls):
        if cls._work is None:
            cls._work = tempfile.mkdtemp(prefix="kiln-dev-")
            atexit.register(shutil.rmtree, cls._work, ignore_errors=True)
        return pathlib.Path(cls._work)

    def module_with(self, signature=None):
        """The latest build if it holds `signature` ("kernel=void(...)"; None:
        only the decorators' signatures), else a new build that adds it."""
        with self.lock:
            if self.module is not None and (signature is None or signature in self.signatures):
                return self.module
            return self._build(self.signatures + ([signature] if signature else []))

    def _build(self, signatures):
        from kiln import _compiler

        stem = pathlib.Path(self.path).stem
        name = f"{stem if stem.isidentifier() else 'kernels'}__kiln_dev_{next(self._counter)}"
        output = self._output_folder() / name
        [extension] = _compiler.build_module(
            self.path, str(output), module_name=name, arch=_architecture(), signatures=signatures,
            module_stays_python=True)
        spec = importlib.util.spec_from_file_location(name, extension)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.signatures = signatures
        self.module = module
        return module


def _architecture():
    """What to compile for: the GPU kernels will run on, or (on the CPU
    engine) PTX alone, which keeps ptxas out of the build."""
    from kiln import _runtime

    if _runtime.target() == "cuda":
        major, minor = _runtime.device_info()["compute_capability"]
        return f"{major}{minor}"
    return "80-virtual"


def _compiler_available():
    try:
        import kiln._compiler  # noqa: F401
    except ImportError:
        return False
    return True


class LazyKernel:
    """A @cuda.jit kernel of a module running as Python source."""

    def __init__(self, py_func, signatures, options):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.options = dict(options)
        self._declared = list(signatures)
        self._builds = _ModuleBuilds.of(os.path.abspath(py_func.__code__.co_filename))
        self._compiled = {}  # signature text -> the built module's kernel
        self._by_key = {}  # the arguments' type keys -> the built module's kernel
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<kiln kernel {self.__qualname__!r} of {self.__module__!r}>"

    # --- Numba's dispatcher interface ---------------------------------------

    def __getitem__(self, config):
        config = config if isinstance(config, tuple) else (config,)
        if not 2 <= len(config) <= 4:
            raise ValueError(f"kernel '{self.__name__}': a launch configuration is [griddim, blockdim"
                             f"(, stream(, sharedmem))], not {len(config)} values")

        def launch(*args):
            self._kernel_for(args)[config](*args)

        return launch

    def __call__(self, *args, **kwargs):
        raise TypeError(f"kernel '{self.__name__}' needs a launch configuration: "
                        f"{self.__name__}[blocks, threads](...)")

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """kernel.forall(n)(*args): one thread per element, as Numba's."""

        def launch(*args):
            self._kernel_for(args).forall(ntasks, tpb, stream, sharedmem)(*args)

        return launch

    @property
    def signatures(self):
        """The argument types of each compiled specialization."""
        found = []
        for kernel in self._compiled.values():
            found += [entry for entry in kernel.signatures if entry not in found]
        return found

    @property
    def overloads(self):
        """Signature text -> the compiled specialization's kernel object."""
        return dict(self._compiled)

    def specialize(self, *args):
        """Compiles for the types of `args` now; returns self."""
        self._kernel_for(args)
        return self

    # --- Specializations ----------------------------------------------------

    def _signature_of(self, args):
        try:
            types = [signature_type(value, f"argument {i + 1}") for i, value in enumerate(args)]
        except UntypableArgument as error:
            raise TypeError(f"kernel '{self.__name__}': {error}") from None
        return f"void({', '.join(types)})"

    def _kernel_for(self, args):
        """The kernel object that launches these arguments. Every launch
        asks, so the common case is one lookup by the arguments' type keys."""
        key = tuple(map(type_key, args))
        kernel = self._by_key.get(key)
        if kernel is None:
            kernel = self._declared_kernel() if self._declared else self._lazy_kernel(args)
            if None not in key:
                self._by_key[key] = kernel
        return kernel

    def _declared_kernel(self):
        """Compiled for the decorator's signatures alone, as Numba does: the
        built kernel's dispatch takes each call or explains why not."""
        with self._lock:
            if not self._compiled:
                self._compiled = dict.fromkeys(map(str, self._declared), self._compile(None))
            return next(iter(self._compiled.values()))

    def _lazy_kernel(self, args):
        signature = self._signature_of(args)
        with self._lock:
            kernel = self._compiled.get(signature)
            if kernel is None:
                kernel = self._compiled[signature] = self._compile(signature)
                signature_file.record(self._qualified_name(), signature)
            return kernel

    def _qualified_name(self):
        """`pkg.kernels.scale`: the key of the signatures file."""
        module = self.__module__
        if module == "__main__":
            module = pathlib.Path(self._builds.path).stem
        return f"{module}.{self.__name__}"

    def _compile(self, signature):
        """The kernel object holding a specialization for `signature` (None:
        for the decorator's signatures)."""
        if not _compiler_available():
            if signature is None:
                raise NoSpecializationError(
                    f"kernel '{self.__name__}' cannot be compiled: Kiln's compiler is not installed. "
                    "Build the module with `kiln build` and import the built module")
            raise NoSpecializationError(
                f"kernel '{self.__name__}' has no specialization for {signature[4:]}, and Kiln's "
                "compiler is not installed to compile one. Add the signature to the package's "
                "build, under [tool.kiln.signatures] in pyproject.toml:\n"
                f'    "{self._qualified_name()}" = ["{signature}"]')
        request = None if signature is None else f"{self.__name__}={signature}"
        return getattr(self._builds.module_with(request), self.__name__)


class DeviceFunction:
    """A @cuda.jit(device=True) function: kernels of its module call it; Python
    cannot (as with Numba's CUDA target)."""

    def __init__(self, py_func):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func

    def __repr__(self):
        return f"<kiln device function {self.__qualname__!r} of {self.__module__!r}>"

    def __call__(self, *args, **kwargs):
        raise TypeError(f"device function '{self.__name__}' can be called only from kernels and "
                        "other device functions")


def jit(func_or_signature=None, device=False, **options):
    """@cuda.jit, @cuda.jit(), @cuda.jit("void(float32[:])"), @cuda.jit(device=True), ...

    Arguments are Numba's; the compiler reads the decorator from the source,
    so options take effect as Numba defines them."""
    if callable(func_or_signature) and not isinstance(func_or_signature, (str, list, tuple)):
        return DeviceFunction(func_or_signature) if device else LazyKernel(func_or_signature, [], options)
    if func_or_signature is None:
        signatures = []
    elif isinstance(func_or_signature, (list, tuple)):
        signatures = list(func_or_signature)
    else:
        signatures = [func_or_signature]

    def decorate(py_func):
        if device:
            return DeviceFunction(py_func)
        return LazyKernel(py_func, signatures, options)

    return decorate

