# Tests: a math function called with the wrong number of arguments at module
# level gives one error, in the singular where it applies.
import math

from numba import cuda

ROOT = math.sqrt(4, 2)  # expect-error: 'math.sqrt' takes 1 argument (2 given)
FLOOR = math.floor()  # expect-error: 'math.floor' takes 1 argument (0 given)
POWER = math.pow(2)  # expect-error: 'math.pow' takes 2 arguments (1 given)
LOG8 = math.log(8, 2)


@cuda.jit("void(float64[::1])")
def fill(x):
    x[0] = LOG8
