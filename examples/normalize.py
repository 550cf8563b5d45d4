"""Row normalization with the NumPy array operations rewritten as loops.

Source: "Numba for CUDA Programmers", session 3, "Rewriting NumPy array
operations" / "Rewrite in-kernel", and exercise 1 of the session 3 notebook.
The CPU version ``x[i, :] = x[i, :] / x[i, :].mean()`` cannot be compiled for
CUDA (no array expressions or ``.mean()`` in kernels), so each thread computes
the mean of its row with a loop and divides element by element.

What it shows:

* an explicitly typed ``float32(0.0)`` accumulator (to avoid float64 widening
  of the sum);
* in-place ``/=`` of a float32 by an integer (``x.shape[1]``), which Numba
  types as float64: ``mean`` has two types across its SSA versions;
* nested 2D indexing ``x[i, j]`` with a ``cuda.grid(1)`` row index.

Host side: ``x = np.arange(32 * 3).astype(np.float32).reshape((32, 3))``
launched as ``normalize[1, 32](x)``, i.e. one thread per row (so, as in the
course, there is no bounds check).
"""

from numba import cuda, float32


@cuda.jit("void(float32[:, ::1])")
def normalize(x):
    """Divide each row of x by its mean, one thread per row."""
    i = cuda.grid(1)

    # Compute mean manually
    mean = float32(0.0)
    for j in range(x.shape[1]):
        mean += x[i, j]
    mean /= x.shape[1]

    # Array op division rewritten as a loop
    for j in range(x.shape[1]):
        x[i, j] = x[i, j] / mean
