"""Kiln in place of the compiler of Numba's CUDA simulator, for running
numba-cuda's own tests: `numba.cuda.jit` (and the decorators built on it)
make Kiln's dispatchers, which compile each kernel and device function
with Kiln and run it on Kiln's CPU engine. The simulator keeps providing
what kernels do not: device arrays, streams, events, the device list.

Arguments cross over as the simulator's device arrays hold them: a
simulated device array is passed as the NumPy array inside it, which the
kernel then reads and writes in place.

Kiln compiles from source, and some tests make their kernels with `exec`
from a string: the text of each such string is kept in `linecache`, as
IPython keeps a notebook cell's, where Kiln finds it.

Two hooks let the tier watch what the tests do (run_module.py sets them):

- `launch_hook(kernel, launch, args, given)`, if set, makes every launch in
  place of Kiln's configured `launch` (a kiln._runtime.Launch, whose
  griddim, blockdim and sharedmem it may read) of the stand-in `kernel` on
  the host `args`; `given` are the arguments as the test gave them (the
  simulator's device arrays still wrapped). The shadow check runs the
  kernel on the simulator too (shadow_check.py); the sweep's discovery
  runs it on the simulator alone (kernel_sweep.py).
- `made_hook(made, signatures)`, if set, sees every kernel and device
  function made, with the signatures it was given (none: `[]`); the sweep
  builds those given some (kernel_sweep.py).

The functions those hooks run on the simulator call the kernels and device
functions the tests made, which are Kiln's: inside a kernel the simulator
runs, calling one runs its Python function on the simulator, as Numba's
simulator runs its own device functions.
"""

import builtins
import functools
import itertools
import linecache
import os
import sys

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_BUILD = os.environ.get("KILN_BUILD_DIR", os.path.join(_REPO, "build"))

launch_hook = None
made_hook = None

# The simulator's device array class, known once install() has run.
_FakeCUDAArray = None
# kiln.dispatcher.DeviceFunction's subclass made by install(): Kiln treats
# it as its own (host code passes it to the compiler by name), the
# simulator can call it.
_StandInDeviceFunction = None


def is_device_array(value):
    """Whether `value` is one of the simulator's device arrays."""
    return _FakeCUDAArray is not None and isinstance(value, _FakeCUDAArray)


def device_array(host_array):
    """A simulated device array holding `host_array` (not a copy of it)."""
    return _FakeCUDAArray(host_array)


def host_value(value):
    """What Kiln's runtime receives for a value the simulator made."""
    return value._ary if is_device_array(value) else value


def simulator_runs_a_kernel():
    """Whether this call comes from a kernel Numba's simulator is running."""
    from numba.cuda.simulator.kernel import _get_kernel_context

    return _get_kernel_context() is not None


def on_simulator(py_func, device=False, options=None):
    """Numba's simulator's kernel (or device function) of `py_func`,
    compiled with the options that change what the simulator does."""
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    options = options or {}
    return FakeCUDAKernel(py_func, device=device, fastmath=options.get("fastmath", False),
                          debug=bool(options.get("debug", False)))


class Launcher:
    """`kernel[grid, block, stream, shared]` of a stand-in kernel."""

    def __init__(self, kernel, launch):
        self._kernel = kernel
        self._launch = launch

    def __call__(self, *args):
        host_args = tuple(map(host_value, args))
        if launch_hook is None:
            return self._launch(*host_args)
        return launch_hook(self._kernel, self._launch, host_args, args)


class StandInKernel:
    """A Kiln kernel that takes the simulator's arrays."""

    def __init__(self, kernel, py_func=None):
        self._kernel = kernel
        # A specialized kernel (Kiln's Kernel) has no Python function of its own.
        self.py_func = py_func or kernel.py_func
        functools.update_wrapper(self, self.py_func)

    @property
    def __class__(self):
        # Kiln's runtime takes it for the dispatcher it wraps where a kernel
        # captures it or a kernel calls it, as the simulator's own kernel
        # is what numba-cuda's kernels capture.
        return type(self._kernel)

    @property
    def kiln_kernel(self):
        """The Kiln dispatcher (kiln.dispatcher.LazyKernel) behind it."""
        return self._kernel

    @property
    def options(self):
        """The options its jit call gave (a specialized kernel keeps none)."""
        return getattr(self._kernel, "options", {})

    def __getitem__(self, config):
        # Kiln's launches take streams of their own; the simulator's run
        # synchronously, as Kiln's CPU engine does: stream 0.
        if isinstance(config, tuple) and len(config) >= 3:
            config = (config[0], config[1], 0, *config[3:])
        return Launcher(self, self._kernel[config])

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        return Launcher(self, self._kernel.forall(ntasks, tpb, 0, sharedmem))

    def specialize(self, *args):
        return StandInKernel(self._kernel.specialize(*map(host_value, args)), self.py_func)

    def __call__(self, *args, **kwargs):
        if simulator_runs_a_kernel():  # a kernel called from a kernel the simulator runs
            return on_simulator(self.py_func, options=self.options)(*args, **kwargs)
        return self._kernel(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._kernel, name)


def _device_function_type(device_function):
    """A subclass of Kiln's DeviceFunction that kernels on the simulator can
    call; elsewhere, calling it is refused as Kiln refuses it."""

    class StandInDeviceFunction(device_function):
        def __call__(self, *args, **kwargs):
            if simulator_runs_a_kernel():
                return on_simulator(self.py_func, device=True)(*args, **kwargs)
            return super().__call__(*args, **kwargs)

    return StandInDeviceFunction


def _keep_exec_sources():
    """Makes `exec` of a string keep the string's text in linecache."""
    plain_exec = builtins.exec
    numbers = itertools.count()

    def exec_keeping_source(source, globals=None, locals=None, /, **options):
        if globals is None:  # exec's default: the caller's namespaces
            caller = sys._getframe(1)
            globals = caller.f_globals
            locals = caller.f_locals if locals is None else locals
        if isinstance(source, str):
            name = f"<exec {next(numbers)}>"
            linecache.cache[name] = (len(source), None, source.splitlines(True), name)
            source = compile(source, name, "exec")
        return plain_exec(source, globals, locals, **options)

    builtins.exec = exec_keeping_source


def signatures_given(func_or_sig):
    """The signatures a `cuda.jit(...)` call gives: [] for none."""
    if func_or_sig is None or (callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple))):
        return []
    return list(func_or_sig) if isinstance(func_or_sig, list) else [func_or_sig]


def _stand_in(made, signatures):
    """The stand-in for what Kiln's jit made, shown to `made_hook`."""
    from kiln import dispatcher

    if isinstance(made, dispatcher.LazyKernel):
        made = StandInKernel(made)
    elif isinstance(made, dispatcher.DeviceFunction):
        made = _StandInDeviceFunction(made.py_func, made.built_name)
    if made_hook is not None:
        made_hook(made, signatures)
    return made


def install():
    """Makes `numba.cuda.jit` Kiln's. Call before the tests import."""
    _keep_exec_sources()
    if os.path.join(_BUILD, "python") not in sys.path:
        sys.path.insert(0, os.path.join(_BUILD, "python"))
    os.environ.setdefault("KILN_TARGET", "cpu")
    from numba import cuda
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    global _FakeCUDAArray, _StandInDeviceFunction
    _FakeCUDAArray = FakeCUDAArray
    # A kernel captures a device array by the address of its data, which a
    # simulated one holds in its NumPy array (the CPU engine reads host
    # memory in place).
    FakeCUDAArray.__cuda_array_interface__ = property(
        lambda array: dict(array._ary.__array_interface__, version=3))

    from kiln import _module_builds, decorators, dispatcher

    _StandInDeviceFunction = _device_function_type(dispatcher.DeviceFunction)
    # The tests set Numba's settings, which Kiln's builds read in place of
    # kiln.cuda.config's.
    numba_config = sys.modules["numba.cuda"].config
    if not hasattr(numba_config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS"):
        numba_config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = ""  # Numba's default; the simulator has none
    _module_builds.link_include_dirs = lambda: [
        folder for folder in numba_config.CUDA_NVRTC_EXTRA_SEARCH_PATHS.split(":") if folder]

    def jit(func_or_sig=None, device=False, **options):
        signatures = signatures_given(func_or_sig)
        made = decorators.jit(func_or_sig, device=device, **options)
        if isinstance(made, (dispatcher.LazyKernel, dispatcher.DeviceFunction)):
            return _stand_in(made, signatures)

        def decorate(py_func):
            return _stand_in(made(py_func), signatures)

        return decorate

    cuda.jit = jit
    cuda.declare_device = decorators.declare_device
    # Whether kernels may use bfloat16 is a question about the device that
    # runs them: Kiln's CPU engine, not the simulator's fake GPU.
    from kiln import cuda as kiln_cuda

    cuda.is_bfloat16_supported = kiln_cuda.is_bfloat16_supported


def first_error(error):
    """The first line of an exception's message that says what went wrong:
    of Kiln's diagnostics, the first error."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    return ((errors or lines or [""])[0])[:300] or type(error).__name__


def build_now(made, signature=None):
    """Compiles a stand-in kernel or device function as its first launch
    would, launching nothing: for the signatures its decorator gave, or,
    with `signature` ("void(float32[::1])"), for that specialization.
    Raises what Kiln raises (kiln._compiler.CompileError, ...)."""
    from kiln._module_builds import ModuleBuilds

    if isinstance(made, StandInKernel):
        kernel = made.kiln_kernel
        builds, name = kernel._builds, kernel.built_name
    else:
        builds, name = ModuleBuilds.of_function(made.py_func), made.built_name
    builds.module_with(name, None if signature is None else f"{name}={signature}")
