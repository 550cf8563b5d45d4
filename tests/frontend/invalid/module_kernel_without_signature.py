# Tests: a kernel with no signature in its decorator (and none given elsewhere).
from numba import cuda


@cuda.jit
def zero(x):  # expect-error: kernel 'zero' has no signature
    x[cuda.grid(1)] = 0
