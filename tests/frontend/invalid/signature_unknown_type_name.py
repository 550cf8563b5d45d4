# Tests: a misspelled type name in a signature string.
from numba import cuda


@cuda.jit("void(flaot32[::1])")  # expect-error: name 'flaot32' is not defined in a signature string
def zero(x):
    x[cuda.grid(1)] = 0
