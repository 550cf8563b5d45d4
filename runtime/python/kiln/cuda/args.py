"""`cuda.In`, `cuda.Out`, `cuda.InOut`: how a host array passed to a kernel
crosses to the device. A bare NumPy array is copied in and back (InOut);
`In` skips the copy back, `Out` the copy in.

On the CPU engine device memory is host memory: every hint passes the host
array itself, in place, and there is nothing to copy. On a GPU the hint
makes the device copy; Out and InOut copy it back into the host array when
the launch has let go of it, which on the default stream is once the kernel
has finished.
"""

import weakref

import numpy as np

from kiln import _runtime

__all__ = ["ArgHint", "In", "InOut", "Out"]


class ArgHint:
    """A kernel argument with a say in how it crosses to the device."""

    copy_in = True
    copy_back = True

    def __init__(self, value):
        self.value = value

    def _kiln_device_argument(self, stream_handle):
        """The device array the launch passes for this argument."""
        from .devicearray import DeviceNDArray, device_array_like, in_place_view, to_device

        if isinstance(self.value, DeviceNDArray):
            return self.value
        host = np.asarray(self.value)
        if _runtime.shares_host_memory():
            return in_place_view(host, stream_handle)
        if self.copy_in:
            device = to_device(host, stream=stream_handle)
        else:
            device = device_array_like(host, stream=stream_handle)
        if self.copy_back:
            result = DeviceNDArray._view(device.shape, device.strides, device.dtype, device.device_pointer,
                                         device, stream_handle)
            weakref.finalize(result, device.copy_to_host, host, stream_handle)
            return result
        return device

    def __repr__(self):
        return f"{type(self).__name__}({self.value!r})"


class In(ArgHint):
    """Copied to the device before the launch, not back."""

    copy_back = False


class Out(ArgHint):
    """Copied back from the device after the launch, not in."""

    copy_in = False


class InOut(ArgHint):
    """Copied in and back, as a bare NumPy array is."""
