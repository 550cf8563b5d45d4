"""The device: `get_current_device()`, `is_available()`, `detect()`, `synchronize()`."""

import contextlib

from kiln import _runtime

__all__ = [
    "Device",
    "get_current_device",
    "select_device",
    "list_devices",
    "is_available",
    "detect",
    "synchronize",
    "defer_cleanup",
    "profile_start",
    "profile_stop",
    "profiling",
]


class Device:
    """What host code sees of the device (`numba.cuda.cudadrv.driver.Device`)."""

    def __init__(self, info):
        self._info = dict(info)
        self.id = int(info.get("ordinal", 0))
        self.name = info.get("name", "")
        self.compute_capability = tuple(info.get("compute_capability", (0, 0)))
        self.uuid = info.get("uuid", "")
        self.total_memory = int(info.get("total_memory", 0))
        self.MULTIPROCESSOR_COUNT = int(info.get("multiprocessor_count", 1))
        self.WARP_SIZE = int(info.get("warp_size", 32))
        self.MAX_THREADS_PER_BLOCK = int(info.get("max_threads_per_block", 1024))
        self.MAX_SHARED_MEMORY_PER_BLOCK = int(info.get("max_shared_memory_per_block", 48 * 1024))
        self.target = _runtime.target()

    @property
    def supports_float16(self):
        return True

    @property
    def supports_bfloat16(self):
        return self.compute_capability >= (8, 0)

    def reset(self):
        synchronize()

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name}'>"


def get_current_device():
    """The device kernels run on (on the CPU target, the CPU engine)."""
    return Device(_runtime.device_info())


def select_device(device_id):
    """Kiln uses one device (ordinal 0, or the CPU engine)."""
    device = get_current_device()
    if device_id != device.id:
        raise ValueError(f"Kiln runs on device {device.id} only; cannot select device {device_id}")
    return device


def list_devices():
    return [get_current_device()]


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
