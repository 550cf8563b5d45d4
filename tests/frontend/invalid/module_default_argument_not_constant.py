# Tests: a default value must be a constant Kiln can compute.
import numpy as np

from numba import cuda, float32


@cuda.jit(device=True)
def cast(a, dtype=float32):  # expect-error: expected a constant, found type 'numba.float32'
    return a


@cuda.jit(device=True)
def shift(a, table=np.zeros(3)):  # expect-error: module 'numpy' has no attribute 'zeros' that kernels can use
    return a


@cuda.jit("void(float32[::1])")
def use(x):
    x[0] = cast(x[0]) + shift(x[0])
