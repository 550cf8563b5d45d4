"""The device: `get_current_device()`, `is_available()`, `detect()`,
`synchronize()`, and what the device supports."""

import contextlib
import functools

from kiln import _runtime

__all__ = [
    "Device",
    "cuda_error",
    "get_current_device",
    "select_device",
    "list_devices",
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

# Limits every device Kiln builds for has (compute capability 7.0 and up),
# by the names Numba gives device attributes (CU_DEVICE_ATTRIBUTE_*).
ARCHITECTURE_LIMITS = {
    "MAX_BLOCK_DIM_X": 1024,
    "MAX_BLOCK_DIM_Y": 1024,
    "MAX_BLOCK_DIM_Z": 64,
    "MAX_GRID_DIM_X": 2**31 - 1,
    "MAX_GRID_DIM_Y": 65535,
    "MAX_GRID_DIM_Z": 65535,
    "MAX_REGISTERS_PER_BLOCK": 65536,
    "TOTAL_CONSTANT_MEMORY": 65536,
    "UNIFIED_ADDRESSING": 1,
    "CONCURRENT_KERNELS": 1,
}


class Device:
    """What host code sees of the device (`numba.cuda.cudadrv.driver.Device`).
    Its attributes in capitals are the device attributes Numba reads with
    cuDeviceGetAttribute, as far as Kiln's runtime knows them."""

    def __init__(self, info):
        self._info = dict(info)
        self.id = int(info.get("ordinal", 0))
        self.name = info.get("name", "")
        self.compute_capability = tuple(info.get("compute_capability", (0, 0)))
        self.uuid = info.get("uuid", "")
        self.total_memory = int(info.get("total_memory", 0))
        self.COMPUTE_CAPABILITY_MAJOR, self.COMPUTE_CAPABILITY_MINOR = self.compute_capability
        self.MULTIPROCESSOR_COUNT = int(info.get("multiprocessor_count", 1))
        self.WARP_SIZE = int(info.get("warp_size", 32))
        self.MAX_THREADS_PER_BLOCK = int(info.get("max_threads_per_block", 1024))
        self.MAX_SHARED_MEMORY_PER_BLOCK = int(info.get("max_shared_memory_per_block", 48 * 1024))
        self.target = _runtime.target()
        if self.target == "cpu":
            self.KERNEL_EXEC_TIMEOUT = 0
            self.PCI_DOMAIN_ID = self.PCI_BUS_ID = self.PCI_DEVICE_ID = 0

    def __getattr__(self, name):
        if name in ARCHITECTURE_LIMITS:
            return ARCHITECTURE_LIMITS[name]
        if name.isupper():
            raise AttributeError(f"Kiln's runtime does not read the device attribute {name}: it knows "
                                 f"{', '.join(sorted(self._known_attributes()))}")
        raise AttributeError(f"'Device' object has no attribute {name!r}")

    def _known_attributes(self):
        return [key for key in vars(self) if key.isupper()] + list(ARCHITECTURE_LIMITS)

    @property
    def supports_float16(self):
        return True

    @property
    def supports_bfloat16(self):
        """GPUs of compute capability 8.0 and up; the CPU engine computes
        bfloat16 in float32 and rounds, as older GPUs' bindings do."""
        return self.target == "cpu" or self.compute_capability >= (8, 0)

    @property
    def supports_fp8(self):
        """GPUs of compute capability 8.9 and up, as numba-cuda says; the CPU
        engine, whose FP8 conversions are cuda_fp8.h's portable ones."""
        return self.target == "cpu" or self.compute_capability >= (8, 9)

    def get_primary_context(self):
        from .context import current_context

        return current_context()

    def release_primary_context(self):
        """The runtime keeps the primary context for the process."""

    def reset(self):
        from .context import current_context

        current_context().reset()

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name}'>"


@functools.cache
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
    """The devices kernels can run on: `cuda.gpus`."""
    from .context import gpus

    return gpus


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
