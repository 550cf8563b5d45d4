# Tests: a named tuple's type in a signature names one field per element.
from numba import cuda


@cuda.jit('void(float64[::1], NamedTuple((int64, float64), "Point", ("x", "y")))')
def good(out, p):
    out[0] = p.x + p.y


@cuda.jit('void(float64[::1], NamedTuple((int64, float64), "Point", ("x",)))')  # expect-error: a named tuple's type is NamedTuple((type, ...), "ClassName", ("field", ...)), one field name per type
def bad(out, p):
    out[0] = p.x
