# Tests: shared_memory_carveout takes 'MaxL1', 'MaxShared', 'default' or a
# percentage from -1 to 100, as numba-cuda checks it.
from numba import cuda


@cuda.jit("void(float32[::1])", shared_memory_carveout="maxshared")
def fine(x):
    pass


@cuda.jit("void(float32[::1])", shared_memory_carveout=101)  # expect-error: option 'shared_memory_carveout' must be 'MaxL1', 'MaxShared', 'default' or an integer from -1 to 100
def too_much(x):
    pass


@cuda.jit("void(float32[::1])", shared_memory_carveout="lots")  # expect-error: option 'shared_memory_carveout' must be 'MaxL1', 'MaxShared', 'default' or an integer from -1 to 100
def unknown(x):
    pass
