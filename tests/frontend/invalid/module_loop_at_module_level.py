# Tests: a 'for' loop at module level.
from numba import cuda

WEIGHTS = (0.25, 0.5, 0.25)
TOTAL = 0.0
for w in WEIGHTS:  # expect-error: this statement cannot be in a kernel module
    TOTAL += w


@cuda.jit("void(float32[::1])")
def normalize(x):
    x[cuda.grid(1)] /= 3
