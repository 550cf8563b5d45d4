# Tests: a kernel with two decorators.
import functools  # expect-warning: import of 'functools' is ignored

from numba import cuda


@functools.lru_cache
@cuda.jit("void(float32[::1])")
def zero(x):  # expect-error: function 'zero' has more than one decorator
    x[cuda.grid(1)] = 0
