# Tests: an `if __name__ == "__main__":` block of host code in a kernel module.
import numpy as np
from numba import cuda


@cuda.jit("void(float32[::1])")
def zero(x):
    x[cuda.grid(1)] = 0


if __name__ == "__main__":  # expect-error: host code cannot be in a kernel module
    data = np.ones(128, dtype=np.float32)
    zero[1, 128](data)
    print(data.sum())
