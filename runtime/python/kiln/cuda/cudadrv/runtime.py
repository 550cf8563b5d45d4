"""`numba.cuda.cudadrv.runtime`: the CUDA version. Kiln's runtime uses the
driver, not the CUDA runtime library, so the version is the one the driver
supports, or (-1, -1) on the CPU engine, as the simulator reports it."""

from kiln import _runtime

__all__ = ["Runtime", "get_version", "runtime"]


class Runtime:
    def get_version(self):
        """(major, minor) of the CUDA version the driver supports."""
        return _runtime.driver_version() or (-1, -1)

    def is_supported_version(self):
        """Kiln's modules carry their PTX and cubins: any driver that runs them will do."""
        return True

    @property
    def supported_versions(self):
        return (self.get_version(),)


runtime = Runtime()


def get_version():
    return runtime.get_version()
