"""The tests of numba-cuda's suite that test Numba's own machinery rather
than the language its kernels are written in: no other compiler could pass
them, so the conformance count leaves them out, each with its reason."""

import re

# (pattern matched against the test id from `numba.cuda.tests.cudapy.`, reason)
INTERNALS = [
    (r"test_retrieve_autoconverted_arrays\..*",
     "uses `cuda.jit(extensions=...)`, the hook through which Numba's dispatcher hands arguments to "
     "its own argument handlers"),
    (r"test_array_alignment\.TestCudasimUnsupportedAlignment\..*",
     "checks that Numba's simulator itself refuses alignments it cannot simulate"),
    (r"test_exception\.TestException\.test_zero_division_error_in_debug",
     "expects the simulator's FloatingPointError where the CUDA target, as Kiln, raises "
     "ZeroDivisionError"),
]


# Tests the simulator skips that write outside their arrays: on a GPU the
# allocation's granularity takes the excess, but the simulator's host-side
# arrays, which the CPU engine writes through, are exactly their size, so
# running them would corrupt the test process's heap. They stay skipped.
OUT_OF_BOUNDS = [
    (r"test_dispatcher\.TestDispatcher\.test_dispatcher_cpointer_arguments",
     "writes 16 int32 values through raw pointers into device arrays of 10"),
]


def reason_in(table, test_id):
    """The reason of the first (pattern, reason) of `table` whose pattern
    matches the test (its id from `numba.cuda.tests.cudapy.`), or None."""
    name = test_id.removeprefix("numba.cuda.tests.cudapy.")
    for pattern, reason in table:
        if re.fullmatch(pattern, name):
            return reason
    return None


def internals_reason(test_id):
    """Why the test is one of Numba's internals, or None."""
    return reason_in(INTERNALS, test_id)


def out_of_bounds_reason(test_id):
    """Why a test the simulator skips stays skipped, or None."""
    return reason_in(OUT_OF_BOUNDS, test_id)
