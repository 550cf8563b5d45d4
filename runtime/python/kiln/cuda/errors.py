"""The exceptions numba.cuda's host API defines, for `except` clauses that
name them. Kiln raises `CudaSupportError` where no target can run kernels
and `kiln.CudaError` (also `CudaAPIError`) where a driver call fails."""

__all__ = ["CudaDriverError", "CudaRuntimeError", "CudaSupportError", "KernelRuntimeError", "NvvmError",
           "NvrtcError"]


class KernelRuntimeError(RuntimeError):
    """A kernel compiled with debug=True failed at run time, in thread `tid`
    of block `ctaid`."""

    def __init__(self, msg, tid=None, ctaid=None):
        self.tid = tid
        self.ctaid = ctaid
        self.msg = msg
        super().__init__(f"An exception was raised in thread={tid} block={ctaid}\n\t{msg}")


class CudaSupportError(ImportError):
    """No CUDA target can be used (KILN_TARGET=cuda without a usable driver)."""


class CudaDriverError(Exception):
    """The CUDA driver misbehaved."""


class CudaRuntimeError(Exception):
    """The CUDA runtime library failed (Kiln's runtime does not use it)."""


class NvvmError(Exception):
    """NVVM failed: raised by Numba's compiler only; Kiln's compiler reports
    its errors when `kiln build` runs."""


class NvrtcError(Exception):
    """NVRTC failed: raised by Numba's compiler only."""
