# Tests: a ufunc or device function with a declared return type returns a
# value that does not convert to it (Numba: "No conversion from complex128
# to float32").
from numba import cuda, vectorize


@vectorize(["float32(float32)"], target="cuda")
def rotate(x):
    return 1j * x  # expect-error: ufunc 'rotate' returns complex128, which does not convert to float32


@cuda.jit("float32(float32[::1])", device=True)
def first(x):
    return x  # expect-error: device function 'first' returns array(float32, 1d, C), which does not convert to float32


@cuda.jit("float32(float32)", device=True)
def positive(x):
    if x > 0:
        return 1
    return None  # expect-error: device function 'positive' returns none, which does not convert to float32


@cuda.jit("float64(float32)", device=True)
def mixed(x):
    # Each return converts to float64: no error.
    if x > 0:
        return 1
    return x
