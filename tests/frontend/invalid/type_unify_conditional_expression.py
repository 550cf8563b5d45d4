# Tests: the operands of a conditional expression, 'or' and 'and' do not
# unify; the message names the expression, not a hidden variable.
from numba import cuda


@cuda.jit("void(float32[::1], int64)")
def choose(x, n):
    t = (n, n)
    y = t if n > 0 else n  # expect-error: cannot unify UniTuple(int64 x 2) and int64 for the value of this conditional expression
    z = n or t  # expect-error: cannot unify int64 and UniTuple(int64 x 2) for the value of this 'or' expression
    w = n and t  # expect-error: cannot unify int64 and UniTuple(int64 x 2) for the value of this 'and' expression
