"""Vector addition kernels and a streamed increment kernel.

Sources:

* ``add_kernel`` and ``add_kernel_grid``: the introductory notebook, section
  "CUDA in Python" (the explicit threadIdx / blockIdx / blockDim / gridDim
  version, then the same kernel with the ``cuda.grid`` / ``cuda.gridsize``
  helpers). The same grid-stride kernel appears as ``add`` in session 3's
  CUDA Array Interface section.
* ``vector_add``: the "Accelerated Python with Numba" talk, "CUDA Example:
  Grid-strided vector add".
* ``increment_kernel``: session 3 exercises, "Data movement with streams, and
  timing with events" (a port of the CUDA C ``asyncAPI`` sample).

What it shows:

* the start + stride loop that makes the grid size independent of the data
  size, written with the raw thread-indexing intrinsics and with the helpers;
* ``range`` with three arguments, ``len`` of an array;
* signatures as Numba type expressions and as strings.

The host code passes fresh NumPy float32 arrays (``np.arange(n).astype(np.float32)``)
or device copies of them, hence C-contiguous 1D float32 arrays.
"""

from numba import cuda, float32, void


@cuda.jit(void(float32[::1], float32[::1], float32[::1]))
def add_kernel(x, y, out):
    """out = x + y, with explicit thread/block index arithmetic."""
    tx = cuda.threadIdx.x  # this is the unique thread ID within a 1D block
    ty = cuda.blockIdx.x  # Similarly, this is the unique block ID within the 1D grid

    block_size = cuda.blockDim.x  # number of threads per block
    grid_size = cuda.gridDim.x  # number of blocks in the grid

    start = tx + ty * block_size
    stride = block_size * grid_size

    # assuming x and y inputs are same length
    for i in range(start, x.shape[0], stride):
        out[i] = x[i] + y[i]


@cuda.jit(void(float32[::1], float32[::1], float32[::1]))
def add_kernel_grid(x, y, out):
    """out = x + y, using the cuda.grid / cuda.gridsize helpers."""
    start = cuda.grid(1)  # 1 = one dimensional thread grid, returns a single value
    stride = cuda.gridsize(1)  # ditto

    # assuming x and y inputs are same length
    for i in range(start, x.shape[0], stride):
        out[i] = x[i] + y[i]


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def vector_add(r, x, y):
    """r = x + y, grid-strided over len(r)."""
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    stop = len(r)

    for i in range(start, stop, step):
        r[i] = x[i] + y[i]


@cuda.jit("void(int32[::1], int32)")
def increment_kernel(g_data, inc_value):
    """Add inc_value to every element of g_data (one element per thread).

    As in the course (and the CUDA C sample it ports) there is no bounds
    check: the launch is ``n // nthreads`` blocks of ``nthreads`` threads with
    ``n`` a multiple of ``nthreads``. ``g_data`` is an int32 pinned / device
    array and the increment is passed as an int32.
    """
    i = cuda.grid(1)
    g_data[i] = g_data[i] + inc_value
