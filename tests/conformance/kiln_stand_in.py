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
"""

import builtins
import functools
import itertools
import linecache
import os
import sys

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_BUILD = os.environ.get("KILN_BUILD_DIR", os.path.join(_REPO, "build"))


# The simulator's device array class, known once install() has run.
_FakeCUDAArray = None


def _host_value(value):
    """What Kiln's runtime receives for a value the simulator made."""
    return value._ary if isinstance(value, _FakeCUDAArray) else value


class Launcher:
    """`kernel[grid, block, stream, shared]` of a stand-in kernel."""

    def __init__(self, configured):
        self._configured = configured

    def __call__(self, *args):
        return self._configured(*map(_host_value, args))


class StandInKernel:
    """A Kiln kernel that takes the simulator's arrays."""

    def __init__(self, kernel):
        self._kernel = kernel
        functools.update_wrapper(self, kernel.py_func)

    def __getitem__(self, config):
        # Kiln's launches take streams of their own; the simulator's run
        # synchronously, as Kiln's CPU engine does: stream 0.
        if isinstance(config, tuple) and len(config) >= 3:
            config = (config[0], config[1], 0, *config[3:])
        return Launcher(self._kernel[config])

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        return Launcher(self._kernel.forall(ntasks, tpb, 0, sharedmem))

    def specialize(self, *args):
        return StandInKernel(self._kernel.specialize(*map(_host_value, args)))

    def __call__(self, *args, **kwargs):
        return self._kernel(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._kernel, name)


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


def install():
    """Makes `numba.cuda.jit` Kiln's. Call before the tests import."""
    _keep_exec_sources()
    if os.path.join(_BUILD, "python") not in sys.path:
        sys.path.insert(0, os.path.join(_BUILD, "python"))
    os.environ.setdefault("KILN_TARGET", "cpu")
    from numba import cuda
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    global _FakeCUDAArray
    _FakeCUDAArray = FakeCUDAArray

    from kiln import dispatcher

    def jit(func_or_sig=None, device=False, **options):
        made = dispatcher.jit(func_or_sig, device=device, **options)
        if isinstance(made, dispatcher.LazyKernel):
            return StandInKernel(made)
        if isinstance(made, dispatcher.DeviceFunction):
            return made

        def decorate(py_func):
            built = made(py_func)
            return StandInKernel(built) if isinstance(built, dispatcher.LazyKernel) else built

        return decorate

    cuda.jit = jit
