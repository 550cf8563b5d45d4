"""`numba.cuda.cudadrv` for Kiln: the driver-level names packages import
(`cuda.cudadrv.driver.CudaAPIError`, `cuda.cudadrv.devicearray.DeviceNDArray`,
...), over Kiln's runtime rather than a Python binding of the driver."""

from . import devicearray, devices, driver, error, linkable_code, runtime

__all__ = ["devicearray", "devices", "driver", "error", "linkable_code", "runtime"]
