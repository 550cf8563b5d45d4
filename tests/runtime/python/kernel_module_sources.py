"""A kernel module of many small kernels, for the tests and benchmarks of
import time and memory (bench/runtime_startup.py imports it too)."""


def many_kernels_source(count):
    """A kernel module of `count` kernels k0, k1, ...: out = x + y * (i + 1)."""
    kernels = [f"""
@cuda.jit(void(float32[::1], float32[::1], float32[::1]))
def k{i}(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i] * {i + 1}.0
""" for i in range(count)]
    return "from numba import cuda, float32, void\n" + "".join(kernels)
