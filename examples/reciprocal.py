"""Elementwise reciprocal compiled for debugging (``debug=True, opt=0``).

Source: "Numba for CUDA Programmers", session 3, "Generating debug info" /
"Off-by-one error example" (also in the "Accelerated Python with Numba" talk,
cuda-gdb and simulator slides). The course kernel deliberately has an
off-by-one bounds check (``if i > x.shape[0]: return``) so that thread 10 of
a 32-thread launch on ``np.zeros(10)`` reads and writes past the end; here
the check is written correctly (``>=``).

What it shows:

* decorator options ``debug=True`` and ``opt=0`` next to a signature (the
  course pairs them because debug info with optimization is unsupported);
* an early ``return`` guard in a kernel;
* ``1 / x[i]``: int / float64 true division (float64 data, since the host
  array is ``np.zeros(10)``).
"""

from numba import cuda


@cuda.jit("void(float64[::1])", debug=True, opt=0)
def reciprocal(x):
    """x[i] = 1 / x[i] for every element, one thread per element."""
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return
    x[i] = 1 / x[i]
