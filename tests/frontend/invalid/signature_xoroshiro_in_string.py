# Tests: xoroshiro128p_type used inside a signature string, where only numba.types is in scope.
from numba import cuda
from numba.cuda.random import xoroshiro128p_type, xoroshiro128p_uniform_float32


@cuda.jit("void(xoroshiro128p_type[:], float32[::1])")  # expect-error: name 'xoroshiro128p_type' is not defined in a signature string
def uniform(states, out):
    i = cuda.grid(1)
    out[i] = xoroshiro128p_uniform_float32(states, i)
