"""The build sweep: every kernel and device function numba-cuda's cudapy
folder makes with an explicit signature, and every specialization its
tests launch, built by Kiln in a child process, so that a build that
crashes Kiln (a signal, an internal error, a hang) is an outcome, whether
or not a test the simulator runs launches it.

Finding them. Most of the folder's kernels are made when its code runs:
functions jitted inside test methods, module functions jitted by a test
(`cuda.jit("void(uint32[:])")(atomic_add)`), closures of factories, modules
a test copies and imports (test_caching's copies of cache_usecases.py), so
reading the source cannot give them with their signatures. They are
recorded as the code makes them: the stand-in's `made_hook` sees every
kernel and device function made, with the signatures given, and its
`launch_hook` every launch, with its arguments. The code runs in three ways:

- the Kiln run of each test file (run_module.py --kiln): importing it, then
  its tests, as the conformance count runs them;
- then, in the same process, the tests the simulator skips, with their
  skip markers lifted, and the module's test functions in pytest's style
  (which unittest does not collect), in discovery mode: each launch is
  recorded and runs on the simulator alone, so that the test goes on to
  make and launch the kernels after it; what the test then asserts is
  ignored. A test that runs longer than DISCOVERY_TEST_S seconds is
  stopped;
- the usecase modules no test file is named after (cache_usecases.py,
  recursion_usecases.py, ...), imported by a process of their own
  (run_module.py --sweep-only NAME); their kernels without signatures are
  found when the test files that use them run.

`static_signature_definitions` reads the source for a cross-check: every
function decorated, or passed to a jit call, with a signature written in
the source; one the sweep never reaches is reported as not reached.

Building. Every item found is built once, compile-only (never launched:
a kernel run on arguments it was not written for may index out of
bounds), after the tests have run: a kernel or device function given
signatures, for those, as its first launch would build it (a device
function with the other device functions its module gives signatures, as
Kiln builds them); a specialization of a kernel without signatures, for
the signature Kiln's dispatcher gives those arguments (kiln._typeof), or,
for 0-d arrays, which the dispatcher refuses, for the type Numba gives
them (Array(int64, 0, 'C')). The dispatcher keeps what it built, so an
item the tests built already costs nothing more. A kernel that reads a
global its test has changed since (test_caching sets one back to None)
is built with the value the global has then.

Recording. The log gets a line before each build ("started") and one
after ("ended": "built", "refused" with Kiln's first error, or "internal
error", which INTERNAL_FAILURES tells from a refusal); a build running
longer than BUILD_TIMEOUT_S seconds ends the process (faulthandler). A
"started" line without its "ended" line means the process died in that
build: run_suite.py counts it as a crash and runs the sweep of the file
again in a fresh process (run_module.py --sweep-only), which finds the
same items by running every test of the file in discovery mode and builds
those not tried yet. The log also names each test the discovery run
starts ("discovering"), so that a process that dies outside a build says
in which test.
"""

import ast
import contextlib
import faulthandler
import inspect
import io
import json
import signal
import sys
import time
import types
import unittest

import numpy as np

import kiln_stand_in
from shadow_check import SIMULATED_THREADS, argument_types, kernel_name, run_on_simulator, thread_count

# A build running longer than this hangs: the process ends.
BUILD_TIMEOUT_S = 60

# A test of the discovery run is stopped after this.
DISCOVERY_TEST_S = 20


# Kiln's own machinery failing on what it made (its IR, the symbols it
# named), never the kernel's fault: internal errors, whatever the message
# calls them.
INTERNAL_FAILURES = ("internal error", "kiln: internal", "invalid LLVM IR", "linking the kernels' LLVM IR failed",
                     "cannot link a shared library", "LLVM ERROR")


def is_internal_failure(text):
    """Whether Kiln's error text says Kiln failed, not the kernel."""
    return any(marker in text for marker in INTERNAL_FAILURES)


class DiscoveryTimeout(Exception):
    """A test of the discovery run took longer than DISCOVERY_TEST_S."""


def _spelled(value, where):
    """A launch argument's type as a signature spells it: what Kiln's
    dispatcher derives, or, for a 0-d array (which it refuses), Numba's
    type of it."""
    from kiln._typeof import signature_type

    if isinstance(value, np.ndarray) and value.ndim == 0:
        return f"Array({signature_type(value[()], where)}, 0, 'C')"
    return signature_type(value, where)


def specialization_signature(args):
    """'void(float32[::1], int64)' for a launch's host arguments; raises
    TypeError (kiln._typeof.UntypableArgument) for one no signature spells."""
    return "void(" + ", ".join(_spelled(value, f"argument {i + 1}") for i, value in enumerate(args)) + ")"


class Item:
    """One thing the sweep builds: a kernel or device function for the
    signatures it was given (`signature` None), or a kernel without
    signatures for the specialization `signature`."""

    def __init__(self, kind, made, signature, shown, origin, untypable=None):
        self.kind = kind
        self.made = made
        self.signature = signature
        py_func = made.py_func
        self.name = kernel_name(py_func)
        self.file = py_func.__code__.co_filename
        self.line = py_func.__code__.co_firstlineno
        self.shown = shown  # the signatures, as the report shows them
        self.origin = origin
        # Why Kiln's dispatcher cannot type the launch's arguments, if it cannot.
        self.untypable = untypable
        self.key = f"{kind} {self.file.rsplit('/', 1)[-1]}:{self.line} {self.name} {shown}"

    def description(self):
        return {"key": self.key, "kind": self.kind, "name": self.name, "file": self.file, "line": self.line,
                "signature": self.shown, "origin": self.origin}


class Sweep:
    """Records what the tests make and launch (made, launched), then builds
    each (build_all), logging to the open file `log`. Items whose keys are
    in `tried` were tried by an earlier process and are not built again."""

    def __init__(self, log, tried=()):
        self._log = log
        self._tried = set(tried)
        self.items = {}
        # The id of the test running, None while modules are imported.
        self.test = None

    def _add(self, item):
        self.items.setdefault(item.key, item)

    def made(self, made, signatures):
        """The stand-in's made_hook: a kernel or device function given
        signatures is an item."""
        if signatures:
            kind = "kernel" if isinstance(made, kiln_stand_in.StandInKernel) else "device function"
            self._add(Item(kind, made, None, ", ".join(map(str, signatures)), self.test or "import"))

    def launched(self, kernel, args):
        """Notes a launch: a specialization of a kernel without signatures
        (one given signatures is an item already)."""
        from kiln.dispatcher import LazyKernel

        lazy = kernel.kiln_kernel
        if not isinstance(lazy, LazyKernel) or lazy._declared:
            return  # a specialized kernel (built already), or one given signatures
        try:
            signature = specialization_signature(args)
        except Exception as error:  # noting a launch must never change what the test sees
            shown = "void" + argument_types(args)
            self._add(Item("specialization", kernel, None, shown, self.test or "import", untypable=str(error)))
            return
        self._add(Item("specialization", kernel, signature, signature, self.test or "import"))

    def discovery_launch(self, kernel, launch, args, given):
        """The launch hook of the discovery run: noted, then run on the
        simulator alone (unless it is too big to: the test then goes on with
        what its arrays held)."""
        self.launched(kernel, args)
        if thread_count(launch) <= SIMULATED_THREADS:
            run_on_simulator(kernel, launch, given)

    def discover(self, module_name, test_ids):
        """Runs the tests `test_ids` of the module in discovery mode, their
        skip markers lifted, and its pytest-style test functions."""
        if module_name not in sys.modules:
            return  # it cannot be imported: it makes nothing
        tests = [test for test in tests_of(unittest.defaultTestLoader.loadTestsFromName(module_name))
                 if test.id() in test_ids]
        for test in tests:
            lift_skip_markers(test)
        tests += module_test_functions(sys.modules[module_name])
        kept = kiln_stand_in.launch_hook
        kiln_stand_in.launch_hook = self.discovery_launch
        handler = signal.signal(signal.SIGALRM, _stop_the_test)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                unittest.TestSuite(tests).run(_DiscoveryResult(self))
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, handler)
            kiln_stand_in.launch_hook = kept

    def build_all(self):
        """Builds every item not tried yet, logging each; then logs that
        the sweep finished."""
        for item in list(self.items.values()):
            if item.key in self._tried:
                continue
            self._tried.add(item.key)
            if item.untypable is not None:
                self._write("ended", item.description(), outcome="refused", detail=item.untypable)
                continue
            self._write("started", item.description())
            started = time.perf_counter()
            outcome, detail = self._build(item)
            self._write("ended", item.description(), outcome=outcome, detail=detail,
                        seconds=round(time.perf_counter() - started, 3))
        self._write("finished", {})

    @staticmethod
    def _build(item):
        faulthandler.dump_traceback_later(BUILD_TIMEOUT_S, exit=True)
        try:
            kiln_stand_in.build_now(item.made, item.signature)
            return "built", ""
        except Exception as error:
            outcome = "internal error" if is_internal_failure(str(error)) else "refused"
            return outcome, kiln_stand_in.first_error(error)
        finally:
            faulthandler.cancel_dump_traceback_later()

    def note_discovering(self, test_id):
        """Logs the test the discovery run starts: if the process dies
        outside a build, the last one says where."""
        self._write("discovering", {"test": test_id})

    def _write(self, event, fields, **more):
        self._log.write(json.dumps({"event": event, **fields, **more}) + "\n")
        self._log.flush()


class _DiscoveryResult(unittest.TestResult):
    """Outcomes ignored; each test named as the one that makes what it makes,
    and stopped after DISCOVERY_TEST_S seconds."""

    def __init__(self, sweep):
        super().__init__()
        self._sweep = sweep

    def startTest(self, test):
        super().startTest(test)
        self._sweep.test = test.id()
        self._sweep.note_discovering(test.id())
        signal.alarm(DISCOVERY_TEST_S)

    def stopTest(self, test):
        signal.alarm(0)
        self._sweep.test = None
        super().stopTest(test)


def _stop_the_test(signum, frame):
    raise DiscoveryTimeout(f"stopped after {DISCOVERY_TEST_S} s")


def tests_of(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from tests_of(test)
        else:
            yield test


class _ModuleTest(unittest.FunctionTestCase):
    """A test function of a module, named by the module and its name."""

    def id(self):
        function = self._testFunc
        return f"{function.__module__}.{function.__name__}"


def module_test_functions(module):
    """The module's test functions in pytest's style (test_* functions of
    the module taking no arguments), which unittest does not collect."""
    return [_ModuleTest(function) for name, function in vars(module).items()
            if name.startswith("test_") and inspect.isfunction(function) and function.__module__ == module.__name__
            and not inspect.signature(function).parameters]


def lift_skip_markers(test):
    """Makes a test skipped by a marker (unittest.skip, skipIf, numba's
    skip_on_cudasim ...) run: the marker of its class cleared, its method
    unwrapped from the skipping wrapper. Skips the test asks for while it
    runs (self.skipTest) stay."""
    cls = type(test)
    if getattr(cls, "__unittest_skip__", False):
        cls.__unittest_skip__ = False
    method = getattr(cls, test._testMethodName)
    original = method
    while getattr(original, "__unittest_skip__", False) and hasattr(original, "__wrapped__"):
        original = original.__wrapped__
    if original is not method:
        setattr(test, test._testMethodName, types.MethodType(original, test))


# --- The cross-check against the source ------------------------------------

def _is_jit(node):
    """`cuda.jit`, `jit`, `numba.cuda.jit`."""
    name = ast.unparse(node)
    return name == "jit" or name.endswith(".jit")


def _given_signature(node):
    """Whether `node` is a jit call given arguments other than options: as
    a decorator, or called on a function (`cuda.jit(sig)(f)`), those are
    signatures."""
    return isinstance(node, ast.Call) and _is_jit(node.func) and (
        bool(node.args) or any(keyword.arg in ("sig", "signature", "func_or_sig") for keyword in node.keywords))


def static_signature_definitions(path):
    """[(line, name)] of the functions the file at `path` decorates, or
    passes to a jit call, with a signature: `line` is the function's first
    line as its code object has it (its first decorator's)."""
    tree = ast.parse(path.read_text())
    definitions = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            definitions.setdefault(node.name, node)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(map(_given_signature, node.decorator_list)):
            found.add(node)
        elif (isinstance(node, ast.Call) and _given_signature(node.func) and len(node.args) == 1
              and isinstance(node.args[0], ast.Name) and node.args[0].id in definitions):
            found.add(definitions[node.args[0].id])
    return sorted((min([node.lineno] + [d.lineno for d in node.decorator_list]), node.name) for node in found)
