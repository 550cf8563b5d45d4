# Tests: link= takes a list of files; numba-cuda would iterate over a lone
# string and link each character.
from numba import cuda


@cuda.jit("void(float32[::1])", link="helpers.cu")  # expect-error: option 'link' must be a list of file names, even for one file: link=['helpers.cu']
def one(x):
    pass


@cuda.jit("void(float32[::1])", link=5)  # expect-error: option 'link' must be a list of file names
def number(x):
    pass


@cuda.jit("void(float32[::1])", link=None)
def nothing(x):
    pass
