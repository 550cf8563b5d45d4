"""Runs one of numba-cuda's test modules (`numba.cuda.tests.cudapy.<name>`)
with unittest, Numba's CUDA simulator providing the host side, and prints
one JSON object per test: its id, its outcome and why.

    python run_module.py test_array OUT.jsonl [--kiln]

With --kiln, Kiln stands in for the simulator's compiler (kiln_stand_in.py):
every kernel and device function is compiled by Kiln and run on its CPU
engine, in this process and in the Python processes its tests start.
"""

import json
import os
import sys
import time
import traceback
import unittest

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"


class RecordingResult(unittest.TestResult):
    """Each test's outcome, written as it ends (a crash loses only the
    rest). A test whose subtests fail fails with the first one's error."""

    def __init__(self, out):
        super().__init__()
        self.out = out
        self.started = 0.0
        self.recorded = False
        self.subtest_failure = None

    def startTest(self, test):
        super().startTest(test)
        self.started = time.perf_counter()
        self.recorded = False
        self.subtest_failure = None

    def stopTest(self, test):
        if not self.recorded:
            self.record(test, *(self.subtest_failure or ("passed", "")))
        super().stopTest(test)

    def record(self, test, outcome, detail=""):
        self.recorded = True
        self.out.write(json.dumps({"id": test.id(), "outcome": outcome, "detail": detail[-2000:],
                                   "seconds": round(time.perf_counter() - self.started, 3)}) + "\n")
        self.out.flush()

    def addSuccess(self, test):
        self.record(test, "passed")

    def addFailure(self, test, err):
        self.record(test, "failed", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        self.record(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        self.record(test, "skipped", str(reason))

    def addExpectedFailure(self, test, err):
        self.record(test, "expected failure")

    def addUnexpectedSuccess(self, test):
        self.record(test, "unexpected success")

    def addSubTest(self, test, subtest, err):
        if err is not None and self.subtest_failure is None:
            failed = issubclass(err[0], test.failureException)
            self.subtest_failure = ("failed" if failed else "error", self._exc_info_to_string(err, subtest))


def main():
    name, out_path = sys.argv[1:3]
    if "--kiln" in sys.argv[3:]:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, here)
        import kiln_stand_in

        kiln_stand_in.install()
        # Python processes the tests start get the stand-in too.
        os.environ["KILN_CONFORMANCE_STAND_IN"] = "1"
        child_site = os.path.join(here, "child_site")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [child_site, os.environ.get("PYTHONPATH")]))
    module_name = f"numba.cuda.tests.cudapy.{name}"
    with open(out_path, "w") as out:
        try:
            suite = unittest.defaultTestLoader.loadTestsFromName(module_name)
        except Exception:
            out.write(json.dumps({"id": module_name, "outcome": "error",
                                  "detail": "cannot import: " + traceback.format_exc()[-2000:],
                                  "seconds": 0}) + "\n")
            return
        suite.run(RecordingResult(out))


if __name__ == "__main__":
    main()
