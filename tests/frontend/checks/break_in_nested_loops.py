# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/break_in_nested_loops.typed
#
# A `break` out of the outer loop, after an inner loop: the kernel's own
# arguments reach the code after the loops unchanged. No phi joins them with
# an undefined value from the break edge (which let the optimizer delete the
# store).
from numba import cuda


@cuda.jit("void(int32[:], int32)")
def k(out, v):
    for j in range(10):
        for q in range(3):
            pass
        if j == 1:
            break
    out[0] = v

# CHECK-LABEL: kernel @break_in_nested_loops.k$0(array(int32, 1d, A) %0 out, int32 %1 v)
# CHECK-NOT: undef
# CHECK: array.store %0, 0:int64, %1
# CHECK-NEXT: return
