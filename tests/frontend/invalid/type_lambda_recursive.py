# Tests: a lambda that calls itself through the variable it is assigned to,
# which Numba refuses as it refuses any recursive function defined inside a
# kernel.
from numba import cuda


@cuda.jit("void(int64[::1])")
def countdown(out):
    f = lambda a: f(a - 1) if a > 0 else 0  # noqa: E731
    out[0] = f(3)  # expect-error: '<lambda>' is defined inside a kernel or device function and calls itself; such functions cannot be recursive (as in Numba): define a @cuda.jit(device=True) function at module level
