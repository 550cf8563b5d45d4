# Tests: NumPy ufuncs called in ways kernels cannot run: on arrays without
# an output array (a kernel cannot allocate one), with an output that is not
# an array or has fewer dimensions than the inputs, with inputs no loop takes.
import numpy as np
from numba import cuda


@cuda.jit("void(float64[:], float64[:])")
def needs_output(a, out):
    out[0] = np.sin(a)[0]  # expect-error: 'np.sin' on arrays needs an output array in a kernel, which cannot allocate one: pass it as the last argument


@cuda.jit("void(float64, float64)")
def scalar_output(x, y):
    np.cos(x, y)  # expect-error: the output argument of 'np.cos' must be an array, not float64


@cuda.jit("void(float64[:, :], float64[:])")
def output_rank(a, out):
    np.tanh(a, out)  # expect-error: the output array of 'np.tanh' has 1 dimensions, fewer than its input 2


@cuda.jit("void(float64[:], float64[:])")
def no_loop(a, out):
    out[0] = np.bitwise_and(a[0], 1)  # expect-error: no implementation of 'np.bitwise_and' accepts (float64, Literal[int](1))


@cuda.jit("void(float64[:])")
def wrong_count(a):
    a[0] = np.arctan2(a[0])  # expect-error: 'np.arctan2' takes 2 arguments (1 given)
