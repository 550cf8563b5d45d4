"""Calling cuRAND's device API, written in CUDA C, from Python kernels.

Source: "Numba for CUDA Programmers", session 3, "C / C++ Interop - cuRAND
Device-side API example".

What it shows:

* ``cuda.declare_device`` for functions defined in CUDA C/C++, called with
  Numba's foreign-function ABI (see docs/abi.md);
* ``link=["curand_shim.cu"]``: Kiln compiles the .cu file with nvcc for each
  architecture and links it with the kernel's PTX through nvJitLink.

The course passes the generator states with a custom argument handler
(``extensions=[...]``); here they are a plain byte array of
``n * sizeof(curandState)`` bytes (48 each), which the shim indexes as
``curandState *``. cuRAND's device API compiles as host C++ too, so on the
CPU engine the same shim runs, compiled by clang with the toolkit's headers.

Host side: ``states = cuda.device_array(n * 48, dtype=np.uint8)``,
``init_states[blocks, threads](states, 1234)``, then
``count_low_bits_native[blocks, threads](states, 10000, results)``.
"""

from numba import cuda, int32, int64, uint8, uint32, uint64, void

curand_init = cuda.declare_device(
    "_numba_curand_init", int32(uint8[::1], uint64, uint64, uint64, uint64)
)
curand = cuda.declare_device("_numba_curand", uint32(uint8[::1], uint64))


@cuda.jit(void(uint8[::1], uint64), link=["curand_shim.cu"])
def init_states(states, seed):
    """One cuRAND state per thread: same seed, one subsequence each."""
    i = cuda.grid(1)
    curand_init(states, i, seed, i, 0)


@cuda.jit(void(uint8[::1], int64, int32[::1]), link=["curand_shim.cu"])
def count_low_bits_native(states, sample_count, results):
    """Count the draws whose lowest bit is set, per thread."""
    i = cuda.grid(1)
    count = 0

    # Generate pseudo-random numbers
    for sample in range(sample_count):
        x = curand(states, i)

        # Check if low bit set
        if x & 1:
            count += 1

    # Store results
    results[i] += count
