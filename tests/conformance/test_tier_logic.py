"""The conformance tier's own judgements, on small cases: how the shadow
check copies and compares arguments and when it allows rounding, how a
failed test is classified, how the sweep attributes a crash and finds
signatures in source. Fast: no kernel is compiled."""

import json
import math
import os
import pathlib
import subprocess
import sys
import textwrap
import unittest

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import kernel_sweep  # noqa: E402
import run_suite  # noqa: E402
from shadow_check import MATH_ULPS, AliasingCopier, first_difference, math_ulps  # noqa: E402


def test_copies_keep_views_of_one_buffer_views_of_one_copy():
    base = np.arange(12.0)
    whole, tail = base.reshape(3, 4), base[4:]
    copier = AliasingCopier()
    whole_copy, tail_copy = copier.copy(whole), copier.copy(tail)
    whole_copy[1, 0] = -1.0
    assert tail_copy[0] == -1.0, "a write through one view of the copy must show through the other"
    assert base[4] == 4.0, "the copy must not write to the original"
    assert tail_copy.strides == tail.strides


def test_nans_and_complex_nans_compare_equal():
    quiet = np.array([np.nan], np.float64)
    payload = np.array([0x7FF8000000000001], np.uint64).view(np.float64)
    assert first_difference(quiet, payload, 0, "out") is None, "NaN payloads are no semantics"
    kiln = np.array([complex(math.nan, math.nan)])
    simulator = np.array([complex(math.pi / 2, math.nan)])
    assert first_difference(kiln, simulator, 0, "out") is None, "a complex number with a NaN part is one NaN"


def test_floats_differ_by_a_bit_only_where_math_allows_it():
    one = np.array([1.0], np.float32)
    next_up = np.nextafter(one, np.float32(2))
    assert first_difference(one, next_up, 0, "out").startswith("out[0]: Kiln"), "exact by default"
    assert first_difference(one, next_up, MATH_ULPS, "out") is None
    assert first_difference(one, one * 2, MATH_ULPS, "out") is not None, "the allowance is a few ulps only"


def test_a_finite_part_beside_an_infinite_one_may_differ_where_math_allows_it():
    # cmath.log10 of a complex64 with an infinite part: Numba's phase is float32's atan2.
    kiln = np.array([complex(np.inf, -0.6821882)], dtype=np.complex64)
    simulator = np.array([complex(np.inf, -0.68218815)], dtype=np.complex64)
    assert first_difference(kiln, simulator, MATH_ULPS, "out") is None
    assert first_difference(kiln, simulator, 0, "out") is not None, "exact without math"
    far = np.array([complex(np.inf, -0.7)], dtype=np.complex64)
    assert first_difference(kiln, far, MATH_ULPS, "out") is not None, "the finite part is still compared"


def test_records_compare_field_by_field():
    dtype = np.dtype([("n", np.int32), ("x", np.float64)])
    kiln, simulator = np.zeros(2, dtype), np.zeros(2, dtype)
    simulator["n"][1] = 7
    assert first_difference(kiln, simulator, 0, "recs") == (
        "recs.n[1]: Kiln np.int32(0), simulator np.int32(7) (1 of 2 elements differ)")


# Run in a child process: the simulator's numba.cuda, once imported, would
# stand in for the real one in every later test of this process.
SHADOW_CHECK_OF_A_LAUNCH_STORING_NOTHING = """
import io, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from numba import cuda
from shadow_check import ShadowCheck


def fill_threadidx(a):
    i = cuda.threadIdx.x
    a[i] = i


class Kernel:
    # A stand-in kernel, as the shadow check sees one.
    py_func = staticmethod(fill_threadidx)
    options = {}
    kiln_kernel = None


class LaunchStoringNothing:
    # A Kiln launch of four threads that stores nothing: what Kiln's CPU
    # engine once did with `a[i] = i` into int32 arrays.
    griddim, blockdim, sharedmem = (1, 1, 1), (4, 1, 1), 0

    def __call__(self, *args):
        pass

    def prepare(self, *args):
        raise TypeError("no specialization")


log = io.StringIO()
a = np.zeros(4, np.int32)
ShadowCheck(log).launch(Kernel, LaunchStoringNothing(), (a,), (a,))
print(log.getvalue())
"""


def test_the_shadow_check_catches_a_kernel_that_stores_nothing():
    done = subprocess.run([sys.executable, "-c", SHADOW_CHECK_OF_A_LAUNCH_STORING_NOTHING, str(HERE)],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1"))
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["outcome"] == "differed", record
    assert record["detail"].startswith("a[1]: Kiln np.int32(0), simulator np.int32(1) (3 of 4 elements differ)")


def _plain(out):
    out[0] = 1.0


def _transcendental(out):
    out[0] = math.sin(out[0])


def _power(out):
    out[0] = out[0] ** 2.5


class _Device:
    """A device function as the stand-in makes one: its Python function."""

    def __init__(self, py_func):
        self.py_func = py_func


_exp_device = _Device(lambda x: math.exp(x))


def _calls_device(out):
    out[0] = _exp_device(out[0])


@pytest.mark.parametrize("kernel, options, ulps", [
    (_plain, {}, 0), (_transcendental, {}, MATH_ULPS), (_power, {}, MATH_ULPS), (_plain, {"fastmath": True}, MATH_ULPS),
    (_calls_device, {}, MATH_ULPS)])
def test_rounding_is_allowed_where_the_kernel_calls_math(kernel, options, ulps):
    assert math_ulps(kernel, options) == ulps


@pytest.mark.parametrize("outcome, detail, category", [
    ("passed", "", "passed"),
    ("failed", "AssertionError: Arrays are not equal", "wrong result"),
    ("error", "kiln._compiler.CompileError: f.py:3:5: error: argument unpacking ...", "refusal"),
    ("error", "kiln._compiler.CompileError: error: internal error: invalid LLVM IR for 'f'", "crash")])
def test_a_failed_test_is_a_wrong_result_only_if_its_assertion_failed(outcome, detail, category):
    assert run_suite.classify({"outcome": outcome, "detail": detail}) == category


def test_a_build_the_process_died_in_is_a_crash():
    events = [{"event": "started", "key": "k0"}, {"event": "ended", "key": "k0", "outcome": "built"},
              {"event": "started", "key": "k1"},
              {"event": "started", "key": "k2"}, {"event": "ended", "key": "k2", "outcome": "refused"},
              {"event": "finished"}]
    # The first process died in k1's build; the second, knowing k0 and k1 tried, went on.
    items = run_suite.sweep_outcomes("test_x", events, [(0, "the process ended with signal 11"), (3, None)])
    assert {key: item["outcome"] for key, item in items.items()} == {"k0": "built", "k1": "crashed", "k2": "refused"}
    assert items["k1"]["detail"] == "the process ended with signal 11"


def test_a_sweep_that_never_finished_says_in_which_test():
    events = [{"event": "started", "key": "k0"}, {"event": "ended", "key": "k0", "outcome": "built"},
              {"event": "discovering", "test": "numba.cuda.tests.cudapy.test_x.TestX.test_inspect"}]
    items = run_suite.sweep_outcomes("test_x", events, [(0, "the process ended with signal 6")])
    assert items["stopped"]["detail"] == (
        "the process ended with signal 6 (in test_x.TestX.test_inspect, run for discovery)")


def test_signatures_in_source_are_found(tmp_path):
    source = tmp_path / "kernels.py"
    source.write_text(textwrap.dedent("""\
        from numba import cuda

        @cuda.jit("void(float32[:])")
        def decorated(a):
            pass

        def plain(a):
            pass

        def later(a):
            pass

        class TestX:
            def test_it(self):
                kernel = cuda.jit("void(int32[:])")(later)

                @cuda.jit
                def no_signature(a):
                    pass
        """))
    assert kernel_sweep.static_signature_definitions(source) == [(3, "decorated"), (10, "later")]


def test_lifted_markers_let_a_skipped_test_run():
    ran = []

    class Skipped(unittest.TestCase):
        @unittest.skip("not on the simulator")
        def test_it(self):
            ran.append(True)

    test = Skipped("test_it")
    kernel_sweep.lift_skip_markers(test)
    test.run(unittest.TestResult())
    assert ran == [True]


def test_documentation_examples_are_judged_by_their_own_assertions(monkeypatch):
    monkeypatch.setattr(run_suite.doc_examples, "GAPS",
                        [(r"test_ffi\.TestFFI\.test_ex_linking_cu", "CUDA C++ is not supported")])
    records = {
        "numba.cuda.tests.doc_examples.test_x.T.test_passes": {"outcome": "passed"},
        "numba.cuda.tests.doc_examples.test_x.T.test_asserts": {"outcome": "failed", "detail": "AssertionError"},
        "numba.cuda.tests.doc_examples.test_x.T.test_needs_cffi": {"outcome": "skipped", "detail": "requires cffi"},
        "numba.cuda.tests.doc_examples.test_ffi.TestFFI.test_ex_linking_cu": {
            "outcome": "error", "detail": "kiln._compiler.CompileError: x.py:1:1: error: CUDA C++"},
        "numba.cuda.tests.doc_examples.test_ffi.TestFFI.test_ex_from_buffer": {
            "outcome": "error", "detail": "kiln._compiler.CompileError: x.py:1:1: error: cffi"},
    }
    entries = run_suite.doc_example_entries(["test_x"], {("docs", "test_x"): {"tests": records, "ended": None}})
    outcomes = {entry["test"]: (entry["outcome"], entry.get("explained")) for entry in entries}
    assert outcomes == {
        "test_x.T.test_passes": ("passed", False),
        "test_x.T.test_asserts": ("wrong result", False),
        "test_x.T.test_needs_cffi": ("skipped", None),
        "test_ffi.TestFFI.test_ex_linking_cu": ("refusal", True),
        "test_ffi.TestFFI.test_ex_from_buffer": ("refusal", False),
    }


def test_a_documentation_module_that_reports_nothing_is_a_crash():
    [entry] = run_suite.doc_example_entries(["test_y"], {("docs", "test_y"): {"tests": {}, "ended": "signal 11"}})
    assert (entry["outcome"], entry["reason"]) == ("crash", "signal 11")
