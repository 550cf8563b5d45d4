"""`numba.cuda.cudadrv.error`: the driver-level exceptions."""

from ..errors import CudaDriverError, CudaRuntimeError, CudaSupportError, NvrtcError, NvvmError

__all__ = ["CudaDriverError", "CudaRuntimeError", "CudaSupportError", "NvrtcError", "NvvmError"]
