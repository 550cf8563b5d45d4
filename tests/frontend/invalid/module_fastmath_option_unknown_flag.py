# Tests: fastmath= takes a bool or a set of the names of LLVM's fast-math
# flags, as Numba does; anything else is named.
from numba import cuda


@cuda.jit("void(float32[::1])", fastmath={"nsz", "quick"})  # expect-error: option 'fastmath' must be a bool, or a set of LLVM fast-math flags ('nnan', 'ninf', 'nsz', 'arcp', 'contract', 'afn', 'reassoc', 'fast')
def unknown_flag(x):
    pass


@cuda.jit("void(float32[::1])", fastmath="fast")  # expect-error: option 'fastmath' must be a bool, or a set of LLVM fast-math flags ('nnan', 'ninf', 'nsz', 'arcp', 'contract', 'afn', 'reassoc', 'fast')
def a_string(x):
    pass


@cuda.jit("void(float32[::1])", fastmath=("nsz", "afn"))
def a_tuple(x):
    pass
