"""Matrix transpose: naive, and tiled through padded shared memory.

Source: the introductory notebook, section "Shared Memory" (itself based on
Mark Harris' "An Efficient Matrix Transpose in CUDA C/C++"). The notebook
transposes ``np.arange(size*size, dtype=np.int32).reshape((size, size))`` with
``size = 1024``, launching ``grid_shape = (size // TILE_DIM, size // TILE_DIM)``
blocks of ``(TILE_DIM, BLOCK_ROWS)`` threads: each thread handles
``TILE_DIM // BLOCK_ROWS`` elements of a 32x32 tile.

What it shows:

* module-level integer constants used as compile-time values (loop bounds
  and a shared array shape), including one derived from another;
* a 2D ``cuda.shared.array`` whose dtype is given as ``numba.types.int32``;
* ``cuda.syncthreads()`` between the shared-memory write and read phases;
* reassigning ``x`` / ``y`` with new index expressions.

Both kernels assume the matrix is square with dimensions a multiple of
TILE_DIM (there is no bounds check, as in the notebook).
"""

import numba.types
from numba import cuda, int32, void

TILE_DIM = 32
BLOCK_ROWS = 8

# One column of padding so that the column-wise reads of the tile hit 32
# different shared-memory banks (see Mark Harris' post).
TILE_DIM_PADDED = TILE_DIM + 1


@cuda.jit(void(int32[:, ::1], int32[:, ::1]))
def transpose(a_in, a_out):
    """a_out = a_in.T, each thread reading and writing global memory directly."""
    x = cuda.blockIdx.x * TILE_DIM + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE_DIM + cuda.threadIdx.y

    for j in range(0, TILE_DIM, BLOCK_ROWS):
        a_out[x, y + j] = a_in[y + j, x]


@cuda.jit(void(int32[:, ::1], int32[:, ::1]))
def tile_transpose(a_in, a_out):
    """a_out = a_in.T, staging each 32x32 tile through shared memory.

    Assumes blocks of (TILE_DIM, BLOCK_ROWS) threads and an input whose
    dimensions are multiples of TILE_DIM.
    """
    tile = cuda.shared.array((TILE_DIM, TILE_DIM_PADDED), numba.types.int32)

    x = cuda.blockIdx.x * TILE_DIM + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE_DIM + cuda.threadIdx.y

    for j in range(0, TILE_DIM, BLOCK_ROWS):
        tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = a_in[y + j, x]  # transpose tile into shared memory

    cuda.syncthreads()  # wait for all threads in the block to finish updating shared memory

    # Compute transposed offsets
    x = cuda.blockIdx.y * TILE_DIM + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE_DIM + cuda.threadIdx.y

    for j in range(0, TILE_DIM, BLOCK_ROWS):
        a_out[y + j, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]
