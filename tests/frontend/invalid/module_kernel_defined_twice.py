# Tests: a kernel defined twice under one name, the first kept under another
# (numba-cuda's caching tests do this): Kiln names compiled functions by
# their names, and would run one definition for both.
from numba import cuda


@cuda.jit("void(int64[::1], int64[::1])")
def ambiguous_function(r, x):
    r[0] = x[0] + 2


renamed_function1 = ambiguous_function


@cuda.jit("void(int64[::1], int64[::1])")
def ambiguous_function(r, x):  # expect-error: kernel 'ambiguous_function' is defined again: Kiln compiles a module's functions by name, and would run one definition for both; give one of them another name
    r[0] = x[0] + 6
