# Tests: a function decorated with a decorator Kiln cannot compile (numba's CPU @njit).
from numba import cuda, njit


@njit  # expect-error: Kiln does not know how to compile a function decorated with
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


@cuda.jit("void(float32[::1])")
def zero(x):
    x[cuda.grid(1)] = 0
