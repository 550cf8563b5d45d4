# Tests: 'from numba import *'.
from numba import *  # expect-error: 'from numba import *' is not supported; import the names you use
from numba import cuda


@cuda.jit("void(float32[::1])")
def zero(x):
    x[cuda.grid(1)] = 0
