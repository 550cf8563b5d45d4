"""Reduction kernels generated with ``@cuda.reduce``.

Source: "Numba for CUDA Programmers", session 3, "Reduction generator usage",
and "The Reduce Generator" in the session 3 notebook (``sum_reduce``). The
decorator takes a binary function of two elements and builds a full
tree-reduction kernel around it; the function is compiled as a device
function for the dtype of the array being reduced, e.g.
``sum_reduce(np.arange(1234, dtype=np.float64) + 1)``.

``max_reduce`` is a second reduction operator in the same style (not in the
course), using the ``max`` builtin.

Note: reductions carry no signature; they are specialized per input dtype,
with both arguments of the array's element type.
"""

from numba import cuda


@cuda.reduce
def sum_reduce(a, b):
    """Sum of all elements."""
    return a + b


@cuda.reduce
def max_reduce(a, b):
    """Largest element."""
    return max(a, b)
