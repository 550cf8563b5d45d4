"""Runs one of numba-cuda's test modules (`numba.cuda.tests.cudapy.<name>`)
with unittest, Numba's CUDA simulator providing the host side, and writes
one JSON object per test: its id, its outcome and why.

    python run_module.py NAME TESTS.jsonl                        # on the simulator
    python run_module.py NAME TESTS.jsonl --kiln [--launches L.jsonl] [--builds B.jsonl]
    python run_module.py NAME --sweep-only --builds B.jsonl

With --kiln, Kiln stands in for the simulator's compiler (kiln_stand_in.py):
every kernel and device function is compiled by Kiln and run on its CPU
engine, in this process and in the Python processes its tests start. With
--launches, every launch is also run on the simulator and compared
(shadow_check.py), one line per launch. With --builds, the build sweep
(kernel_sweep.py) follows the tests: the tests the simulator skips run in
discovery mode, then every kernel found is built, one line per build.

--sweep-only makes the sweep alone, for a module no test file is run for
(a usecase module), or again after a build crashed the process: the
module's tests all run in discovery mode, and what B.jsonl says was tried
already is not built again.

--doc-examples runs a module of `numba.cuda.tests.doc_examples`, the
documentation's examples, instead (with --kiln; see doc_examples.py).

--simulator-skips IDS (with --kiln) runs the tests IDS lists (a file, one
id a line: those the simulator skipped) with the simulator's own skip
lifted: skip_on_cudasim marks nothing, so that Kiln runs what the simulator
cannot (grid barriers, cooperative launches, ...); tests skipped for other
reasons (a package this machine lacks) stay skipped.
"""

import argparse
import contextlib
import json
import os
import sys
import time
import traceback
import unittest

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "numba.cuda.tests.cudapy"
DOC_EXAMPLES = "numba.cuda.tests.doc_examples"


class RecordingResult(unittest.TestResult):
    """Each test's outcome, written as it ends (a crash loses only the
    rest). A test whose subtests fail fails with the first one's error.
    `watch` (a Watch), if given, is told which test starts, and the record
    says how many launches Kiln finished in it."""

    def __init__(self, out, watch=None):
        super().__init__()
        self.out = out
        self.watch = watch
        self.started = 0.0
        self.recorded = False
        self.subtest_failure = None
        self.skipped_ids = []

    def startTest(self, test):
        super().startTest(test)
        self.started = time.perf_counter()
        self.recorded = False
        self.subtest_failure = None
        if self.watch is not None:
            self.watch.start(test.id())

    def stopTest(self, test):
        if not self.recorded:
            self.record(test, *(self.subtest_failure or ("passed", "")))
        super().stopTest(test)

    def record(self, test, outcome, detail="", exception=None):
        self.recorded = True
        record = {"id": test.id(), "outcome": outcome, "detail": detail[-2000:],
                  "seconds": round(time.perf_counter() - self.started, 3)}
        if exception is not None:
            record["exception"] = exception.__name__
        if self.watch is not None:
            record["kiln_launches"] = self.watch.kiln_launches
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def addSuccess(self, test):
        self.record(test, "passed")

    def addFailure(self, test, err):
        self.record(test, "failed", self._exc_info_to_string(err, test), err[0])

    def addError(self, test, err):
        self.record(test, "error", self._exc_info_to_string(err, test), err[0])

    def addSkip(self, test, reason):
        self.skipped_ids.append(test.id())
        self.record(test, "skipped", str(reason))

    def addExpectedFailure(self, test, err):
        self.record(test, "expected failure")

    def addUnexpectedSuccess(self, test):
        self.record(test, "unexpected success")

    def addSubTest(self, test, subtest, err):
        if err is not None and self.subtest_failure is None:
            failed = issubclass(err[0], test.failureException)
            self.subtest_failure = ("failed" if failed else "error", self._exc_info_to_string(err, subtest),
                                    err[0])


def stand_in_kiln():
    """Kiln in place of the simulator's compiler, here and in the Python
    processes the tests start."""
    sys.path.insert(0, HERE)
    import kiln_stand_in

    kiln_stand_in.install()
    os.environ["KILN_CONFORMANCE_STAND_IN"] = "1"
    child_site = os.path.join(HERE, "child_site")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [child_site, os.environ.get("PYTHONPATH")]))
    return kiln_stand_in


class Watch:
    """The launch hook of the Kiln run: every launch Kiln makes, counted
    per test, noted by the sweep (if any) and checked against the simulator
    by the shadow check (if any); both are told which test runs."""

    def __init__(self, check, sweep):
        self.check = check
        self.sweep = sweep
        self.kiln_launches = 0

    def start(self, test_id):
        self.kiln_launches = 0
        for watcher in (self.check, self.sweep):
            if watcher is not None:
                watcher.test = test_id

    def launch(self, kernel, launch, args, given):
        if self.sweep is not None:
            self.sweep.launched(kernel, args)
        if self.check is not None:
            self.check.launch(kernel, launch, args, given)
        else:
            launch(*args)
        self.kiln_launches += 1


def tried_builds(builds_path):
    """The keys of the items an earlier sweep of this log tried to build."""
    if not os.path.exists(builds_path):
        return set()
    with open(builds_path) as log:
        return {event["key"] for event in map(json.loads, log) if event.get("event") in ("started", "ended")}


def load_tests(module_name, out):
    """The module's tests, or None after writing why they cannot load (a
    module may also skip itself at import, as pytest.importorskip does, with
    an exception that is no Exception)."""
    try:
        if module_name.startswith(DOC_EXAMPLES):
            import doc_examples

            return doc_examples.load_tests(module_name)
        return unittest.defaultTestLoader.loadTestsFromName(module_name)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        if out is not None:
            out.write(json.dumps({"id": module_name, "outcome": "error",
                                  "detail": "cannot import: " + traceback.format_exc()[-2000:],
                                  "seconds": 0}) + "\n")
        return None


def every_test_id(suite):
    import kernel_sweep

    return {test.id() for test in kernel_sweep.tests_of(suite)}


def run_on_simulator(module_name, tests_path):
    with open(tests_path, "w") as out:
        suite = load_tests(module_name, out)
        if suite is not None:
            suite.run(RecordingResult(out))


def sweep_only(module_name, sweep):
    """The sweep alone: every test of the module in discovery mode."""
    suite = load_tests(module_name, None)
    if suite is not None:
        sweep.discover(module_name, every_test_id(suite))
    sweep.build_all()


def run_simulator_skips(module_name, ids_path, tests_path, kiln_stand_in):
    """The tests of `ids_path` with skip_on_cudasim lifted, with Kiln."""
    import numba.cuda.testing as testing

    testing.skip_on_cudasim = lambda reason: (lambda test: test)
    with open(ids_path) as listed:
        wanted = {line.strip() for line in listed if line.strip()}
    watch = Watch(None, None)
    kiln_stand_in.launch_hook = watch.launch
    with open(tests_path, "w") as out:
        suite = load_tests(module_name, out)
        if suite is None:
            return
        import kernel_sweep

        from numba_internals import out_of_bounds_reason

        result = RecordingResult(out, watch)
        chosen = unittest.TestSuite()
        for test in kernel_sweep.tests_of(suite):
            if test.id() not in wanted:
                continue
            if reason := out_of_bounds_reason(test.id()):
                result.started = time.perf_counter()
                result.record(test, "skipped", f"not run: it {reason}, which corrupts the process's heap")
            else:
                chosen.addTest(test)
        chosen.run(result)


def run_on_kiln(module_name, tests_path, kiln_stand_in, check, sweep):
    """The tests with Kiln standing in, each launch watched; then, with a
    sweep, the tests the simulator's markers skip, in discovery mode, and
    the builds."""
    watch = Watch(check, sweep)
    kiln_stand_in.launch_hook = watch.launch
    with open(tests_path, "w") as out:
        suite = load_tests(module_name, out)
        result = RecordingResult(out, watch)
        if suite is not None:
            suite.run(result)
    if sweep is not None:
        if suite is not None:
            sweep.discover(module_name, set(result.skipped_ids))
        sweep.build_all()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name")
    parser.add_argument("tests", nargs="?", help="write each test's outcome here (JSON lines)")
    parser.add_argument("--kiln", action="store_true", help="Kiln stands in for the simulator's compiler")
    parser.add_argument("--launches", help="check every launch on the simulator, writing here")
    parser.add_argument("--builds", help="sweep the module's kernels, writing each build here")
    parser.add_argument("--sweep-only", action="store_true", help="the sweep alone, in discovery mode")
    parser.add_argument("--doc-examples", action="store_true", help="a module of the documentation's examples")
    parser.add_argument("--simulator-skips", help="run these tests (a file of ids) without the simulator's skips")
    options = parser.parse_args()
    module_name = f"{DOC_EXAMPLES if options.doc_examples else PACKAGE}.{options.name}"
    if not (options.kiln or options.sweep_only):
        run_on_simulator(module_name, options.tests)
        return

    kiln_stand_in = stand_in_kiln()
    import kernel_sweep
    import shadow_check

    if options.doc_examples:
        import doc_examples

        doc_examples.prepare()
    if options.simulator_skips:
        run_simulator_skips(module_name, options.simulator_skips, options.tests, kiln_stand_in)
        return
    with contextlib.ExitStack() as files:
        sweep = None
        if options.builds:
            tried = tried_builds(options.builds)
            sweep = kernel_sweep.Sweep(files.enter_context(open(options.builds, "a")), tried)
            kiln_stand_in.made_hook = sweep.made
        if options.sweep_only:
            sweep_only(module_name, sweep)
            return
        check = shadow_check.ShadowCheck(files.enter_context(open(options.launches, "a"))) if options.launches else None
        run_on_kiln(module_name, options.tests, kiln_stand_in, check, sweep)


if __name__ == "__main__":
    main()
