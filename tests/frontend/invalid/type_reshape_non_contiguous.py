# Tests: reshape() of an array that may not be contiguous, as Numba refuses
# it; and extents that are not integers.
from numba import cuda


@cuda.jit("void(float64[:], float64[:])")
def strided(a, out):
    y = a.reshape(2, 3)  # expect-error: reshape() supports contiguous arrays only, not array(float64, 1d, A)
    out[0] = y[0, 0]


@cuda.jit("void(float64[::1], float64[:])")
def float_extent(a, out):
    y = a.reshape(2.0, 3)  # expect-error: no implementation of 'array(float64, 1d, C).reshape' accepts (float64, Literal[int](3))
    out[0] = y[0, 0]
