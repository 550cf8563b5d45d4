"""What the device can do and how it is doing: `is_available()`,
`detect()`, `synchronize()`, the number types it supports, profiling.
The device itself is kiln.cuda.context's."""

import contextlib

from kiln import _runtime

from .context import get_current_device

__all__ = [
    "cuda_error",
    "is_available",
    "is_bfloat16_supported",
    "is_float16_supported",
    "is_fp8_supported",
    "is_supported_version",
    "detect",
    "synchronize",
    "defer_cleanup",
    "profile_start",
    "profile_stop",
    "profiling",
]

def is_float16_supported():
    """float16 works on every device Kiln runs on."""
    return True


def is_bfloat16_supported():
    """Whether kernels can use bfloat16 here: on a GPU of compute capability
    8.0 and up, or on the CPU engine."""
    return get_current_device().supports_bfloat16


def is_fp8_supported():
    """Whether kernels can use the FP8 types here: on a GPU of compute
    capability 8.9 and up, or on the CPU engine."""
    return get_current_device().supports_fp8


def is_supported_version():
    """Whether kernels can run here: Kiln's modules carry their PTX and
    cubins, so no CUDA toolkit version is required of the machine."""
    return is_available()


def cuda_error():
    """None if the target started; else why it could not."""
    try:
        _runtime.target()
    except Exception as error:  # noqa: BLE001 - whatever stopped the target is the answer
        return str(error)
    return None


def is_available():
    """True if kernels can run: a CUDA device, or the CPU engine (KILN_TARGET=cpu/auto).

    Like Numba's simulator, the CPU target counts as available.
    """
    try:
        _runtime.target()
    except Exception:  # noqa: BLE001 - a target that cannot start
        return False
    return True


def detect():
    """Print a summary of the device, as Numba's `cuda.detect()`; True if supported."""
    try:
        target = _runtime.target()
        device = get_current_device()
    except Exception as error:  # noqa: BLE001
        print("Found 0 CUDA devices")
        print(f"({error})")
        print("Summary:")
        print("\t0/0 devices are supported")
        return False
    print("Found 1 CUDA devices")
    if target == "cpu":
        print("id %d    %20s %40s" % (device.id, device.name or "Kiln CPU engine", "[SUPPORTED]"))
        print("%40s: %s" % ("Target", "CPU engine (KILN_TARGET=cpu or no GPU)"))
        print("%40s: %d.%d" % (("Compute Capability",) + device.compute_capability))
    else:
        cc = device.compute_capability
        supported = cc >= (3, 5)
        print("id %d    %20s %40s" % (device.id, device.name, "[SUPPORTED]" if supported else "[NOT SUPPORTED: CC < 3.5]"))
        print("%40s: %d.%d" % (("Compute Capability",) + cc))
        print("%40s: %s" % ("UUID", device.uuid))
        print("%40s: %s" % ("Multiprocessors", device.MULTIPROCESSOR_COUNT))
        print("%40s: %s" % ("Total memory", device.total_memory))
        if not supported:
            print("Summary:")
            print("\t0/1 devices are supported")
            return False
    print("Summary:")
    print("\t1/1 devices are supported")
    return True


def synchronize():
    """Wait for all work on the device to finish."""
    _runtime.synchronize()


@contextlib.contextmanager
def defer_cleanup():
    """Numba's deferred-deallocation guard; Kiln frees memory when it is
    collected, so this is a no-op context manager (nestable)."""
    yield


def profile_start():
    """No-op (use Nsight Systems on the whole process)."""


def profile_stop():
    """No-op."""


@contextlib.contextmanager
def profiling():
    yield
