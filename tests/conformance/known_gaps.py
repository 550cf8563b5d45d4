"""Why Kiln fails the tests of numba-cuda's suite it still fails: each known
gap, by the tests it covers, with what stands in the way. The report shows
the reason beside Kiln's own error; a failure without one is new, and says
so."""

from numba_internals import reason_in

# (pattern matched against the test id from `numba.cuda.tests.cudapy.`, reason)
KNOWN_GAPS = [
    (r"test_atomics\.TestCudaAtomics\.test_atomic_sub3",
     "the test passes a uint32 array to a kernel declared `void(int32[:,:])`: Numba's CUDA "
     "dispatcher refuses that call as Kiln does; only the simulator, which ignores signatures, "
     "runs it"),
]


def known_gap(test_id):
    """Why Kiln fails the test, or None for a failure no one has explained."""
    return reason_in(KNOWN_GAPS, test_id)
