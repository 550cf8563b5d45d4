# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/unbound_on_some_paths.typed
#
# `y` is assigned on one path only: the phi after the `if` takes it as
# undefined from the other path, by name, and nothing but a phi reads it.
from numba import cuda


@cuda.jit("void(float64[:], int32)")
def k(out, n):
    if n > 0:
        y = 2.5
    if n > 1:
        out[0] = y

# CHECK-LABEL: kernel @unbound_on_some_paths.k$0
# CHECK: [[Y:%[0-9]+]] = phi undef(y):float64 from bb0, 2.5:float64 from bb1 : float64
# CHECK: array.store %0, 0:int64, [[Y]]
