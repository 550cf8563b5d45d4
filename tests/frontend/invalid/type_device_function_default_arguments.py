# Tests: default values of device functions fill in arguments a call leaves
# out, except with declared signatures (Numba cannot match such a call to
# one) and for defaults that have no run-time value.
from numba import cuda


@cuda.jit(device=True)
def scaled(a, b=2):
    return a * b


@cuda.jit("float32(float32, float32)", device=True)
def declared(a, b=2.0):
    return a + b


@cuda.jit(device=True)
def labelled(a, label="x"):
    return a


@cuda.jit("void(float32[::1])")
def use(x):
    x[0] = scaled(x[0])
    x[1] = scaled(x[0], 3)
    x[2] = declared(x[0])  # expect-error: 'declared' is missing the argument 'b'
    x[3] = labelled(x[0])  # expect-error: the default value 'x' of parameter 'label' has no value at run time and cannot be used here
