# Tests: a kernel with two decorators.
import functools  # expect-warning: import of 'functools' is ignored

from numba import cuda


@functools.lru_cache
@cuda.jit("void(float32[::1])")  # expect-error: function 'zero' has more than one decorator
def zero(x):
    x[cuda.grid(1)] = 0
