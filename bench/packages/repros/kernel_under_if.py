"""Root cause: a kernel defined at module level inside an `if` block
(stumpy's tests/test_core.py: `if cuda.is_available(): @cuda.jit(sig) def
_gpu_searchsorted_kernel(...)`) is missing from the module Kiln builds, and
the launch fails looking it up.

    KILN_TARGET=cpu .venv/bin/python bench/packages/repros/kernel_under_if.py

Seen (stumpy 1.14.1, tests/test_core.py::test_gpu_searchsorted):
    AttributeError: module '_test_core_kiln' has no attribute '_gpu_searchsorted_kernel'
"""
import numpy as np

from kiln import cuda

if cuda.is_available():

    @cuda.jit("void(f8[:])")
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2


a = np.arange(4.0)
double[1, 4](a)
print(a)
