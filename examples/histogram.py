"""Histogram kernels: global atomics, and a shared-memory privatized variant.

Source: the introductory notebook runs a ``histogram.py`` script under
``cuda-memcheck`` right after "Atomic Operations and Avoiding Race Conditions",
and then introduces shared memory; the script itself is not in the course
text, so this is the course's histogram exercise written out: a grid-stride
loop that bins float32 samples in ``[xmin, xmax)`` and counts them with
``cuda.atomic.add``.

What it shows:

* ``cuda.atomic.add`` into a global int32 array at a computed index;
* a ``float32`` -> ``int32`` conversion of the bin position;
* a per-block histogram in ``cuda.shared.array`` with a compile-time constant
  size, zeroed and flushed cooperatively around ``cuda.syncthreads()``, so
  that most atomics hit fast shared memory and only ``NBINS`` global atomics
  per block remain.

Host side (course style): ``x = np.random.normal(size=10000).astype(np.float32)``,
``xmin = np.float32(-4.0)``, ``xmax = np.float32(4.0)``,
``histogram_out = np.zeros(NBINS, dtype=np.int32)``.
"""

from numba import cuda, float32, int32, void

# Number of bins of the shared-memory variant: shared arrays need a size
# known at compile time, so it is a module constant.
NBINS = 64


@cuda.jit(void(float32[::1], float32, float32, int32[::1]))
def cuda_histogram(x, xmin, xmax, histogram_out):
    """Increment bin counts in histogram_out, given histogram range [xmin, xmax)."""
    nbins = histogram_out.shape[0]
    bin_width = (xmax - xmin) / nbins

    start = cuda.grid(1)
    stride = cuda.gridsize(1)

    for i in range(start, x.shape[0], stride):
        bin_number = int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < nbins:
            cuda.atomic.add(histogram_out, bin_number, 1)


@cuda.jit(void(float32[::1], float32, float32, int32[::1]))
def cuda_histogram_shared(x, xmin, xmax, histogram_out):
    """Same result as cuda_histogram, accumulated per block in shared memory.

    ``histogram_out`` must have ``NBINS`` elements.
    """
    block_hist = cuda.shared.array(NBINS, int32)

    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x

    # Zero this block's private histogram.
    for b in range(tid, NBINS, nthreads):
        block_hist[b] = 0
    cuda.syncthreads()

    bin_width = (xmax - xmin) / NBINS
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        bin_number = int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < NBINS:
            cuda.atomic.add(block_hist, bin_number, 1)
    cuda.syncthreads()

    # Merge this block's counts into the global histogram.
    for b in range(tid, NBINS, nthreads):
        cuda.atomic.add(histogram_out, b, block_hist[b])
