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

import functools
import importlib.util
import sys
import tempfile
import threading

from kiln import _manifest, host_values, signature_file
from kiln._module_builds import ModuleBuilds, NoSpecializationError, development_architecture
from kiln._sources import CompiledFromSource
from kiln._typeof import dispatch_descriptor, signature_type, UntypableArgument
from kiln._types import descriptor
from kiln.kernel import entry_signature, Kernel, specialization_tuple


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
        self._builds = ModuleBuilds.of_function(py_func)
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
                                     arch=development_architecture() or "80", signatures=asked, module_stays_python=True,
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
        return any(tuple(map(descriptor, _manifest.argument_types(entry))) == wanted for entry in kernel._entries)

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
        self._builds = ModuleBuilds.of_function(py_func)
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
