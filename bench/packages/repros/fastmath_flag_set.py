"""Root cause: `fastmath=` as a set of LLVM fast-math flag names, which Numba
accepts (stumpy: `fastmath=config.STUMPY_FASTMATH_FLAGS`, {"nsz", "arcp",
"contract", "afn", "reassoc"}). Kiln takes only a bool, and it reads the
decorators of every function of a module it builds for a kernel's device
functions, host-only @njit functions included: stumpy/core.py has 22 such
@njit functions, so every kernel that calls a device function of core.py
(all of gpu_stump, gpu_aamp, ...) fails to compile.

This writes a module like stumpy/core.py (a device function, and a host-only
@njit function with a flag set) beside a kernel that calls it, and runs it:

    KILN_TARGET=cpu .venv/bin/python bench/packages/repros/fastmath_flag_set.py

Seen (stumpy 1.14.1, 129 of 134 GPU tests):
    kiln._compiler.CompileError: .../stumpy/core.py:721:14: error:
    '.config.STUMPY_FASTMATH_FLAGS' is a value computed at import, which the
    module's host code makes when it runs; kernels can use literals, module
    constants, kernels and device functions, and of what host code computes
    at import, numbers, NumPy scalars, NumPy arrays of numbers and tuples of
    numbers
Here:
    .../fm_core.py:7:16: error: 'FLAGS' is a value computed at import, ...

The same flag set written on a kernel, `@cuda.jit(fastmath={"nsz", "arcp"})`,
is refused too ("this expression cannot be evaluated when the module is
compiled: module-level values must be constants, types or signatures");
Numba's simulator runs both.
"""
import pathlib
import subprocess
import sys
import tempfile

CORE = '''\
from numba import njit
from kiln import cuda

FLAGS = {"nsz", "arcp", "contract", "afn", "reassoc"}


@njit(fastmath=FLAGS)  # host code only: no kernel calls it
def host_sum(a):
    return a.sum()


@cuda.jit(device=True)
def twice(x):
    return 2 * x
'''

KERNELS = '''\
import numpy as np
from kiln import cuda
import fm_core


@cuda.jit
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = fm_core.twice(a[i])


a = np.arange(4.0)
double[1, 4](a)
print(a)
'''

with tempfile.TemporaryDirectory() as d:
    pathlib.Path(d, "fm_core.py").write_text(CORE)
    pathlib.Path(d, "fm_kernels.py").write_text(KERNELS)
    sys.exit(subprocess.run([sys.executable, "fm_kernels.py"], cwd=d).returncode)
