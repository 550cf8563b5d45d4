# Tests: libdevice functions take their one signature, positionally, and
# cuda.libdevice has only libdevice's functions.
from numba import cuda
from numba.cuda import libdevice


@cuda.jit("void(float64[::1], complex128[::1])")
def misuse(x, z):
    x[0] = libdevice.sin(x[0], x[1])  # expect-error: no implementation of 'cuda.libdevice.sin' accepts (float64, float64)
    x[1] = libdevice.sin(x=x[0])  # expect-error: 'cuda.libdevice.sin' got an unexpected keyword argument 'x'
    x[2] = libdevice.sin(z[0])  # expect-error: no implementation of 'cuda.libdevice.sin' accepts (complex128)
    x[3] = libdevice.sine(x[0])  # expect-error: module 'cuda.libdevice' has no attribute 'sine' that kernels can use
