# Tests: NumPy 2 raises OverflowError for Python numbers out of a scalar
# type's range; NumPy scalars converted to another type wrap, as C casts do.
import numpy as np

from numba import cuda, int8

BYTE = np.int8(300)  # expect-error: integer 300 is out of bounds for int8
SMALL = int8(-129)  # expect-error: integer -129 is out of bounds for int8
UNSIGNED = np.uint8(-1)  # expect-error: integer -1 is out of bounds for uint8
ROUNDED = np.int8(250.7)  # expect-error: integer 250 is out of bounds for int8
INFINITE = np.int16(np.inf)  # expect-error: inf cannot be converted to int16
COMPLEX = np.int32(1j)  # expect-error: 1j cannot be converted to int32
WRAPPED = np.int8(np.int64(300))
TRUNCATED = np.uint8(-0.5)
LARGEST = np.uint64(2**64 - 1)


@cuda.jit("void(int64[::1])")
def fill(x):
    x[0] = WRAPPED + TRUNCATED + LARGEST
