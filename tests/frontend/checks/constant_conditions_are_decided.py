# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/constant_conditions_are_decided.typed
#
# Numba never types what it never sees: CPython compiles `not (True if True
# else False)` as a jump, so the loop body is not built (`p << 2` on a
# float would be an error), and Numba's dead-branch pruning evaluates
# `-1099511627776 >= -5` before typing, so only np.uint32(x) is typed and
# the conditional expression is a uint32. A local is a constant to it where
# the assignment that reaches the comparison is one (not where a loop
# changes it). In a value, `DEBUG and 1.5` with a module constant DEBUG is
# decided the same way: the value is DEBUG's, a bool. A variable merged from
# several assignments decides nothing, even where every assignment left
# (the loop is entered for sure) assigns True: Numba prunes once, on its SSA
# form, where the variable is a phi, so both sides are typed; so does one
# assigned True on both sides of an `if`. One whose other assignment sits
# under `if DEBUG:` is a constant again: the pruning before SSA form drops
# that assignment, and the variable has one definition left, also where a
# loop merges it with itself.
import numpy as np
from numba import cuda

DEBUG = False


@cuda.jit(device=True)
def dead_loop_body(p):
    p = 1.5
    c = 0
    while c < 2 and (not (True if True else False)):
        c += 1
        p = p << 2
    return p


@cuda.jit(device=True)
def pruned_side(x):
    return x % x if -1099511627776 >= -5 != x else np.uint32(x)


@cuda.jit(device=True)
def assigned_twice(v):
    limit = 7
    limit = 3
    if limit > 5:
        v = 1.5
    limit = 4
    return v


@cuda.jit(device=True)
def changed_by_loop(v):
    limit = 3
    for i in range(2):
        if limit < 1:
            v = 1.5
        limit = 5
    return v


@cuda.jit(device=True)
def module_constant_operand(v):
    return DEBUG and 1.5


@cuda.jit(device=True)
def set_in_a_loop_entered_for_sure(v, small):
    flag = v < 0
    c = 0
    while c < 2:
        c += 1
        flag = True
    return small if flag else v


@cuda.jit(device=True)
def set_on_both_sides(v, small):
    if v < 0:
        flag = True
    else:
        flag = True
    return small if flag else v


@cuda.jit(device=True)
def cleared_only_when_debugging(v, small):
    flag = True
    if DEBUG:
        flag = False
    return small if flag else v


@cuda.jit(device=True)
def cleared_in_a_loop_only_when_debugging(v, small):
    flag = True
    for i in range(3):
        if DEBUG:
            flag = False
    return small if flag else v


@cuda.jit("void(float64[:], int64[:], int8[:])")
def k(out, values, smalls):
    out[0] = dead_loop_body(values[0])
    out[1] = pruned_side(values[1])
    out[2] = assigned_twice(values[2])
    out[3] = changed_by_loop(values[3])
    out[4] = module_constant_operand(values[4])
    out[5] = set_in_a_loop_entered_for_sure(values[5], smalls[0])
    out[6] = set_on_both_sides(values[6], smalls[0])
    out[7] = cleared_only_when_debugging(values[7], smalls[0])
    out[8] = cleared_in_a_loop_only_when_debugging(values[8], smalls[0])

# CHECK-LABEL: function @constant_conditions_are_decided.dead_loop_body$0(int64 %0 p) -> float64
# CHECK-NOT:   shl
# CHECK:       return
# CHECK-LABEL: function @constant_conditions_are_decided.pruned_side$0(int64 %0 x) -> uint32
# CHECK-NOT:   mod
# CHECK:       return
# CHECK-LABEL: function @constant_conditions_are_decided.assigned_twice$0(int64 %0 v) -> int64
# CHECK-LABEL: function @constant_conditions_are_decided.changed_by_loop$0(int64 %0 v) -> float64
# CHECK:       lt %{{[0-9]+}}, 1:int64 : bool
# CHECK-LABEL: function @constant_conditions_are_decided.module_constant_operand$0(int64 %0 v) -> bool
# CHECK-LABEL: function @constant_conditions_are_decided.set_in_a_loop_entered_for_sure$0(int64 %0 v, int8 %1 small) -> int64
# CHECK-LABEL: function @constant_conditions_are_decided.set_on_both_sides$0(int64 %0 v, int8 %1 small) -> int64
# CHECK-LABEL: function @constant_conditions_are_decided.cleared_only_when_debugging$0(int64 %0 v, int8 %1 small) -> int8
# CHECK-LABEL: function @constant_conditions_are_decided.cleared_in_a_loop_only_when_debugging$0(int64 %0 v, int8 %1 small) -> int8
