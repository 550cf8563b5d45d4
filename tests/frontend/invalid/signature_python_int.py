# Tests: Python's int in a signature (Numba's eval finds the builtin and
# fails); the note says what to write instead.
from numba import cuda


@cuda.jit("void(int)")  # expect-error: 'int' is not a type
def by_string(x):
    pass


@cuda.jit((float,))  # expect-error: 'float' is not a type
def by_tuple(x):
    pass


@cuda.jit("void(str)")  # expect-error: 'str' is not a type
def text(x):
    pass
