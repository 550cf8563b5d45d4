# Tests: assignments to a slice of an array that cannot store: an array of
# more dimensions than the view, and values that do not convert to its dtype.
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[:, :])")
def too_many_dimensions(x, y):
    i = cuda.grid(1)
    x[i, :] = y  # expect-error: cannot store array(float32, 2d, A) into array(float32, 1d, C)


@cuda.jit("void(float32[:, ::1], complex128)")
def complex_into_floats(x, z):
    x[0, :] = z  # expect-error: cannot store complex128 into array(float32, 1d, C)
