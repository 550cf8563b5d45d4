# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/folded_operands_are_not_typed.typed
#
# CPython folds `(-1099511627776 << 31) & 7` to 0 before Numba sees the
# bytecode, so the 72-bit intermediate is never typed; only the result is.
# A constant bound to a variable is still typed, as Numba types every
# assignment.
from numba import cuda


@cuda.jit("void(int64[:])")
def k(out):
    out[0] = (-1099511627776 << 31) & 7
    for i in range(((1 << 70) >> 68) - 4, 1):
        out[1] = i

# CHECK-LABEL: kernel @folded_operands_are_not_typed.k$0
# CHECK:     array.store %0, 0:int64, 0:int64
# CHECK:     range 0:int64, 1:int64, 1:int64
