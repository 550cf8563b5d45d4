import numpy as np
from kiln import cuda            # was: from numba import cuda

from .constants import COEFFS, GAINS, lerp

THREADS = 64


@cuda.jit
def blur(out, x):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        acc = 0.0
        for k in range(3):
            j = min(max(i + k - 1, 0), n - 1)
            acc += COEFFS[k] * x[j]
        out[i] = acc


@cuda.jit
def mix(out, a, b, t):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = lerp(a[i], b[i], t)


def _blocks(n):
    return (n + THREADS - 1) // THREADS


def blurred(x):
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    blur[_blocks(x.size), THREADS](out, x)
    return out


def mixed(a, b, t):
    out = np.empty_like(a)
    mix[_blocks(a.size), THREADS](out, a, b, t)
    return out


def _make_gain_kernel(offset):
    @cuda.jit
    def apply_gain(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * GAINS[i % GAINS.size] + offset

    return apply_gain


# Made by a kernel factory at import: a module global the build precompiles.
gain_plus_half = _make_gain_kernel(0.5)


def gained(x):
    out = np.empty_like(x)
    gain_plus_half[_blocks(x.size), THREADS](out, x)
    return out
