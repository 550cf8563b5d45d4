"""Reductions from `@cuda.reduce`, over Kiln's synthesized reduction kernel.

The kernel (frontend/emit/synthesized_kernels.h) is
`kernel(values[:], partials[::1], init, use_init)`: each of its blocks (at
most `BLOCK_LIMIT` threads) folds its grid-stride share of `values` into
`partials[blockIdx.x]`, block 0 also folding in `init` when `use_init`.
A call launches it over the input (up to `MAX_BLOCKS` blocks), then once
more with one block over the partials, as Numba's `Reduce.__call__` does.
"""

import numpy as np

from kiln import _runtime

from .ufunc import element_dtype, signature_types

__all__ = ["Reduction"]

BLOCK_LIMIT = 1024  # kReductionBlockSize: the kernel's shared array
THREADS = 256
MAX_BLOCKS = 64  # as Numba: at most two warps of blocks; each block strides over its share


class Reduction:
    """A compiled `@cuda.reduce` reduction: `r(arr, size=None, res=None, init=0, stream=0)`."""

    def __init__(self, name, kernel):
        self.__name__ = name
        self.name = name
        self._kernel = kernel
        self._dtypes = [element_dtype(signature_types(s)[0]) for s in kernel.signatures]

    @property
    def dtypes(self):
        """The element types this reduction was compiled for."""
        return list(self._dtypes)

    @property
    def signatures(self):
        return self._kernel.signatures

    def __repr__(self):
        return f"<kiln.reduction.Reduction {self.__name__} [{', '.join(str(d) for d in self._dtypes)}]>"

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        """Reduce `arr[:size]` (host or device, 1-d).

        Returns the result as a NumPy scalar, or writes it into `res[0]`
        (a device array) and returns None. An empty input returns `init`.
        """
        from kiln.cuda import devicearray as da
        from kiln.cuda.streams import stream_handle

        handle = stream_handle(stream)
        device = da._device_view(arr, handle)
        if device is None:
            arr = np.asarray(arr)
        else:
            arr = device
        if arr.ndim != 1:
            raise TypeError("only support 1D array")
        if size is not None:
            arr = arr[:size]
        init = arr.dtype.type(init)
        if arr.size < 1:
            return init
        if arr.dtype not in self._dtypes:
            raise TypeError(
                f"reduction '{self.__name__}' was not compiled for {arr.dtype}; compiled for: "
                + ", ".join(str(d) for d in self._dtypes)
            )
        if device is None:
            if _runtime.shares_host_memory():
                values = da.DeviceNDArray._view(
                    arr.shape, arr.strides, arr.dtype, arr.__array_interface__["data"][0], arr, handle
                )
            else:
                values = da.to_device(arr, stream=handle)
        else:
            values = arr

        count = values.size
        blocks = min((count + THREADS - 1) // THREADS, MAX_BLOCKS)
        threads = min(count, THREADS)
        partials = da.device_array(blocks, dtype=values.dtype, stream=handle)
        self._kernel[blocks, threads, handle](values, partials, init, True)
        if blocks > 1:
            final = da.device_array(1, dtype=values.dtype, stream=handle)
            self._kernel[1, min(blocks, BLOCK_LIMIT), handle](partials, final, init, False)
            partials = final

        if res is not None:
            target = da._device_view(res, handle)
            if target is None:
                # A NumPy `res`: write the value there (Numba wants a device array).
                value = partials.getitem(0, stream=handle)
                res[0] = value
                return None
            target[:1].copy_to_device(partials[:1], stream=handle)
            return None
        return partials.getitem(0, stream=handle)
