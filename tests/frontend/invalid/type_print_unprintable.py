# Tests: print() of values numba-cuda cannot print ("printing unimplemented
# for values of type ...").
from numba import cuda


@cuda.jit("void(float32[::1], complex64)")
def show(x, z):
    print(x[0], True, "ok", 1)
    print(x)  # expect-error: array(float32, 1d, C) cannot be printed
    print("value", None)  # expect-error: none cannot be printed
    print(z)  # expect-error: complex64 cannot be printed
