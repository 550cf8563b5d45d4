# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/short_circuit_loop_condition.typed
#
# `while j >= 0 and tmp[j] > 0` (insertion sort): as CPython compiles a
# condition, the `and` is two branches, the second reached only when the
# first holds, and `j` keeps one type, int64, around the loop. As CPython
# compiles a `while`, the condition is tested before the loop and again at
# the end of the body.
from numba import cuda


@cuda.jit("void(int32[:])")
def insertion_step(tmp):
    for k in range(1, 8):
        j = k - 1
        while j >= 0 and tmp[j] > 0:
            j -= 1
        tmp[k] = j

# CHECK-LABEL: kernel @short_circuit_loop_condition.insertion_step$0
# CHECK:      [[START:%[0-9]+]] = sub %{{[0-9]+}}, 1:int64 : int64
# CHECK:      [[FIRST:%[0-9]+]] = ge [[START]], 0:int64 : bool
# CHECK-NEXT: branch [[FIRST]], [[SIDE:bb[0-9]+]], [[EXIT:bb[0-9]+]]
# CHECK:      [[SIDE]]:
# CHECK:      [[SECOND:%[0-9]+]] = gt %{{[0-9]+}}, 0:int64 : bool
# CHECK-NEXT: branch [[SECOND]], [[BODY:bb[0-9]+]], [[EXIT]]
# CHECK:      [[BODY]]:
# CHECK-NEXT: [[J:%[0-9]+]] = phi [[START]] from [[SIDE]], [[NEXT:%[0-9]+]] from [[LATCH:bb[0-9]+]] : int64
# CHECK-NEXT: [[NEXT]] = sub [[J]], 1:int64 : int64
# CHECK-NEXT: [[AGAIN:%[0-9]+]] = ge [[NEXT]], 0:int64 : bool
# CHECK-NEXT: branch [[AGAIN]], [[LATCH]], [[EXIT]]
# CHECK:      [[LATCH]]:
# CHECK:      [[MORE:%[0-9]+]] = gt %{{[0-9]+}}, 0:int64 : bool
# CHECK-NEXT: branch [[MORE]], [[BODY]], [[EXIT]]
# CHECK:      [[EXIT]]:
# CHECK-NEXT: phi [[START]] from {{bb[0-9]+}}, [[START]] from [[SIDE]], [[NEXT]] from [[BODY]], [[NEXT]] from [[LATCH]] : int64
