# Tests: cache-hinted loads and stores take an integer or float array and an
# integer index, or a tuple of one integer per dimension.
from numba import cuda


@cuda.jit("void(float32[::1], float32[:, ::1], complex64[::1])")
def misuse(x, y, z):
    x[0] = cuda.ldcs(x, 1.0)  # expect-error: cannot index array(float32, 1d, C) with float64
    x[1] = cuda.ldcs(x, (1, 2))  # expect-error: cannot index array(float32, 1d, C) with Tuple(Literal[int](1), Literal[int](2))
    x[2] = cuda.ldcg(y, 1)  # expect-error: cannot index array(float32, 2d, C) with Literal[int](1)
    z[0] = cuda.ldcs(z, 0)  # expect-error: no implementation of 'cuda.ldcs' accepts (array(complex64, 1d, C), Literal[int](0))
    cuda.stcg(x, 0)  # expect-error: 'cuda.stcg' takes 3 arguments (2 given)
