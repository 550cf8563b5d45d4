# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/constant_conversions.typed
#
# np.uint16(70000) wraps as NumPy does: it is a Cast of the int64 constant,
# not a constant of a value uint16 cannot hold. The assignment under
# `if False:` is never compiled, so it does not widen `x` to float64.
import numpy as np
from numba import cuda


@cuda.jit("void(uint16[:])")
def k(out):
    x = np.uint16(70000)
    if False:
        x = 1.5
    out[0] = ~x

# CHECK-LABEL: kernel @constant_conversions.k$0
# CHECK:     [[X:%[0-9]+]] = cast 70000:int64 : uint16
# CHECK-NOT: float64
# CHECK:     invert %{{[0-9]+}}
# CHECK:     array.store %0, 0:int64, %{{[0-9]+}}
