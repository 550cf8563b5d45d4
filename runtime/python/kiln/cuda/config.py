"""`numba.cuda.config`: the settings packages read to decide what to do.
Kiln is not Numba's simulator (ENABLE_CUDASIM is 0, even on the CPU
engine: kernels run compiled there), and its settings are environment
variables of its own (KILN_TARGET, KILN_CUDA_DRIVER, ...: docs/runtime.md);
Numba's other settings change nothing in Kiln, and reading one raises an
AttributeError saying so."""

import os

ENABLE_CUDASIM = 0
DISABLE_CUDA = 0
# Whether device arrays from other libraries are synchronized on their
# stream before use (the `__cuda_array_interface__` protocol's default).
CUDA_ARRAY_INTERFACE_SYNC = 1
CUDA_DEFAULT_PTX_CC = (7, 5)
CUDA_DRIVER = os.environ.get("KILN_CUDA_DRIVER", "")
CUDA_ENABLE_NRT = 0
CUDA_LOW_OCCUPANCY_WARNINGS = 0
CUDA_WARN_ON_IMPLICIT_COPY = 0
CUDA_PER_THREAD_DEFAULT_STREAM = 0
# Folders (colon-separated) searched for `#include <...>` in the CUDA C/C++
# files kernels link, read when a kernel compiles in process; `kiln build`
# takes them as --link-include.
CUDA_NVRTC_EXTRA_SEARCH_PATHS = os.environ.get("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS", "")


def __getattr__(name):
    if name.isupper():
        raise AttributeError(f"Kiln does not read Numba's setting {name}: Kiln's runtime is set with its own "
                             "environment variables (KILN_TARGET, KILN_CUDA_DRIVER, ...), and kernels are "
                             "compiled by `kiln build`, whose options are its command line's")
    raise AttributeError(f"module 'kiln.cuda.config' has no attribute {name!r}")
