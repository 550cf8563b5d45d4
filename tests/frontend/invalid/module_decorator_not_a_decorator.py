# Tests: a function decorated with a CUDA API that is not a decorator (cuda.syncthreads).
from numba import cuda


@cuda.syncthreads  # expect-error: Kiln does not know how to compile a function decorated with 'cuda.syncthreads'
def barrier_then_zero(x):
    x[cuda.grid(1)] = 0
