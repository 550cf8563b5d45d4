"""Puts Kiln in place of the simulator's compiler in the Python processes a
test of the conformance tier starts (numba-cuda's print tests run their
kernels with `python -c`), so that those kernels are Kiln's too. Python
imports this module at startup when its folder is on PYTHONPATH."""

import os
import sys

if os.environ.get("KILN_CONFORMANCE_STAND_IN") == "1":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import kiln_stand_in

    kiln_stand_in.install()
