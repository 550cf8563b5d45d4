# Numba's compiled semantics of nested_operands_that_always_short_circuit.py.
import numpy as np
from numba import njit


@njit
def overflowing(p1):
    p1 = min(((--1099511627776) << ((-5) & 31)), 1)
    return p1


@njit
def operands(x):
    never = (x > 0) and ((x < 5) and (not True)) and (overflowing(x) != 0)
    always = (x > 0) or ((x < 5) or (not False)) or (overflowing(x) != 0)
    kept = (x > 0) and ((x < 5) and True) and (x + 10)
    return never + always * 2 + kept * 4


@njit
def kernel(t, a_i8, a_u16, a_i32, a_i64, a_u64, a_f32, a_f64, out_i, out_f, s_i, s_f):
    out_i[t * 4 + 0] = operands(a_i64[t] % 8)
