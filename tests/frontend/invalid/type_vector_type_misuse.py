# Tests: vector types made of the wrong number of elements or of another
# element type, and components beyond their size.
from numba import cuda


@cuda.jit("void(float32[::1])")
def too_few(out):
    v = cuda.float32x3(1.0, 2.0)  # expect-error: no implementation of 'cuda.float32x3' accepts (float64, float64)
    out[0] = v.x


@cuda.jit("void(float32[::1])")
def other_element_type(out):
    v = cuda.float32x2(cuda.int32x2(1, 2))  # expect-error: no implementation of 'cuda.float32x2' accepts (int32x2)
    out[0] = v.x


@cuda.jit("void(float32[::1])")
def no_such_component(out):
    v = cuda.float32x2(1.0, 2.0)
    out[0] = v.z  # expect-error: float32x2 has no attribute 'z'
