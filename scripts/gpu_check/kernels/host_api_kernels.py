"""The kernel the device check's host API step (scripts/gpu_check/
host_api_checks.py) launches on every kind of memory kiln.cuda hands out:
built with Kiln into the bundle, so the GPU machine needs no compiler."""

from numba import cuda


# `float32[:]` (any layout) so that slices, strided views and other
# libraries' arrays are taken as they are.
@cuda.jit("void(float32[:], float32[:], float32)")
def scale(x, out, factor):
    """out = x * factor, one thread per element."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * factor
