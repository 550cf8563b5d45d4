"""numba-cuda's documentation examples (`numba/cuda/tests/doc_examples/`) on
Kiln: the code its user guide shows, as whole programs that import
`numba.cuda` inside the test, define kernels, device functions, ufuncs and
reductions there and launch them.

Numba's simulator skips every one of them ("cuda import at non-top-level":
the simulator cannot stand in for a numba.cuda imported inside a function),
so there is no simulator run to compare with: the examples' own assertions
are the judge. With Kiln standing in (run_module.py --kiln --doc-examples):

* skip_on_cudasim is lifted, so that the examples run; a test skipped for a
  package this machine lacks (skip_unless_cffi) stays skipped;
* the module-level test functions (test_matmul.test_matmul) run as tests;
* `create_xoroshiro128p_states` makes its states with Kiln's host code
  (the same states as Numba's, kiln.cuda.random) instead of the simulator's,
  which runs Numba's generator in Python and takes minutes for the million
  states the Monte Carlo example asks for; the kernels that use them are
  Kiln's either way.

GAPS explains the examples Kiln refuses, as known_gaps.py explains the
cudapy tests.
"""

import inspect
import re
import unittest

# (pattern, reason) pairs; every example passes today.
GAPS = []


def gap_reason(test_id):
    """Why Kiln refuses the example `test_id` ("test_file.Class.test"), if known."""
    for pattern, reason in GAPS:
        if re.fullmatch(pattern, test_id):
            return reason
    return None


def prepare():
    """Lifts the simulator's skip and gives the simulator Kiln's states; to
    be called before the examples are imported."""
    import numba.cuda.random as simulator_random
    import numba.cuda.testing as testing
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    from kiln.cuda import random as kiln_random

    testing.skip_on_cudasim = lambda reason: (lambda test: test)

    def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
        states = kiln_random.create_xoroshiro128p_states(n, seed, subsequence_start).copy_to_host()
        return FakeCUDAArray(states.view(simulator_random.xoroshiro128p_dtype))

    simulator_random.create_xoroshiro128p_states = create_xoroshiro128p_states


def load_tests(module_name):
    """The module's unittest tests and its module-level test functions."""
    import importlib

    module = importlib.import_module(module_name)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    for name, function in vars(module).items():
        if name.startswith("test") and inspect.isfunction(function) and function.__module__ == module_name:
            case = unittest.FunctionTestCase(function)
            case.id = lambda name=name: f"{module_name}.{name}"
            suite.addTest(case)
    return suite
