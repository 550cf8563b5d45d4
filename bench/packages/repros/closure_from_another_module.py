"""Root cause: a kernel factory's kernel calls an `@njit` closure that a
function of *another* module made (sarracen's
`kernel.get_column_kernel_func(samples)` returns an `@njit def func(q, dim)`
closing over a NumPy table; `GPUBackend._fast_2d(weight_function, ...)`
builds kernels that call it). Kiln compiles the closure from the other
module's source with the values it closes over (it once refused it).

    KILN_TARGET=cpu .venv/bin/python bench/packages/repros/closure_from_another_module.py

Seen (sarracen 1.4.1, 30 GPU tests):
    kiln._compiler.CompileError: .../sarracen/interpolate/gpu_backend.py:318:35:
    error: 'weight_function' is a variable of 'GPUBackend._fast_2d', which the
    module's host code makes when it runs; ...
"""
import pathlib
import sys
import tempfile
import textwrap

import numpy as np

folder = pathlib.Path(tempfile.mkdtemp(prefix="kiln-repro-"))
(folder / "tables.py").write_text(textwrap.dedent('''
    import numpy as np
    from numba import njit


    def make_lookup(samples):
        table = np.linspace(0.0, 1.0, samples)

        @njit
        def lookup(q):
            return table[int(q * (samples - 1))]
        return lookup
'''))
(folder / "backend.py").write_text(textwrap.dedent('''
    from kiln import cuda


    def apply(weight_function, a):
        @cuda.jit
        def kernel(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = weight_function(a[i])
        kernel[1, a.size](a)
        return a
'''))
sys.path.insert(0, str(folder))
import backend  # noqa: E402
import tables  # noqa: E402

print(backend.apply(tables.make_lookup(11), np.linspace(0.0, 1.0, 4)))
