"""Kiln: run precompiled Numba CUDA kernels without Numba.

This package is Kiln's runtime: what a built kernel module needs at import.
The compiler itself is the `kiln` command.
"""

__version__ = "0.1.0"
