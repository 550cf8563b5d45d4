# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/short_circuit_loop_condition.typed
#
# `while j >= 0 and tmp[j] > 0` (insertion sort): as CPython compiles a
# condition, the `and` is two branches, the second reached only when the
# first holds, and `j` keeps one type, int64, around the loop.
from numba import cuda


@cuda.jit("void(int32[:])")
def insertion_step(tmp):
    for k in range(1, 8):
        j = k - 1
        while j >= 0 and tmp[j] > 0:
            j -= 1
        tmp[k] = j

# CHECK-LABEL: kernel @short_circuit_loop_condition.insertion_step$0
# CHECK:      [[J:%[0-9]+]] = phi %{{[0-9]+}} from bb{{[0-9]+}}, [[NEXT:%[0-9]+]] from bb{{[0-9]+}} : int64
# CHECK-NEXT: [[FIRST:%[0-9]+]] = ge [[J]], 0:int64 : bool
# CHECK-NEXT: branch [[FIRST]], [[SIDE:bb[0-9]+]], [[EXIT:bb[0-9]+]]
# CHECK:      [[SIDE]]:
# CHECK:      [[SECOND:%[0-9]+]] = gt %{{[0-9]+}}, 0:int64 : bool
# CHECK-NEXT: branch [[SECOND]], [[BODY:bb[0-9]+]], [[EXIT]]
# CHECK:      [[BODY]]:
# CHECK-NEXT: [[NEXT]] = sub [[J]], 1:int64 : int64
