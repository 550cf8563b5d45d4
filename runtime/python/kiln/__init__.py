"""Kiln: run precompiled Numba CUDA kernels without Numba.

This package is Kiln's runtime: what a built kernel module needs at import.
The compiler itself is the `kiln` command.

    import kiln
    kiln.target()        # 'cuda' or 'cpu' (KILN_TARGET=cuda|cpu|auto)
    import kiln.cuda as cuda   # the numba.cuda host API subset
"""

__version__ = "0.1.0"

from kiln._runtime import CudaError  # noqa: E402


def target():
    """Where kernels run: 'cuda' or 'cpu' (chosen at first use by KILN_TARGET)."""
    from kiln import _runtime

    return _runtime.target()


def device_info():
    """The device kernels run on, as a dict (see kiln._runtime.device_info)."""
    from kiln import _runtime

    return _runtime.device_info()
