# Tests: a module constant whose value cannot be computed is reported once;
# its uses in kernels add no "not defined" errors.
import numpy as np

from numba import cuda

TABLE = np.zeros(4)  # expect-error: module 'numpy' has no attribute 'zeros' that kernels can use
LOW, HIGH = np.ones(2), 3  # expect-error: module 'numpy' has no attribute 'ones' that kernels can use
SCALE = 1
SCALE += np.ones(1)  # expect-error: module 'numpy' has no attribute 'ones' that kernels can use


@cuda.jit("void(float32[::1])")
def lookup(x):
    x[0] = TABLE[0] + LOW + HIGH + SCALE
    x[1] = TABLE[1]
