"""Kiln: run precompiled Numba CUDA kernels without Numba.

This package is Kiln's runtime: what a built kernel module needs at import.
The compiler itself is the `kiln` command.

    import kiln
    kiln.target()        # 'cuda' or 'cpu' (KILN_TARGET=cuda|cpu|auto)
    import kiln.cuda as cuda   # numba.cuda's host API
"""

from kiln._version import VERSION as __version__
from kiln._warnings import StaleModuleWarning


def __getattr__(name):
    # kiln.CudaError comes from the C extension, loaded only when asked for:
    # `import kiln.setuptools` (in every setuptools build of a project that
    # uses Kiln) must work even where the extension cannot load.
    if name == "CudaError":
        from kiln._runtime import CudaError

        return CudaError
    if name == "vectorize":  # `from kiln import vectorize`, as from numba
        from kiln.decorators import vectorize

        return vectorize
    raise AttributeError(f"module 'kiln' has no attribute {name!r}")


def target():
    """Where kernels run: 'cuda' or 'cpu' (chosen at first use by KILN_TARGET)."""
    from kiln import _runtime

    return _runtime.target()


def device_info():
    """The device kernels run on, as a dict (see kiln._runtime.device_info)."""
    from kiln import _runtime

    return _runtime.device_info()
