"""vecmath's kernels beside their host code: a module that stays Python
(`from kiln import cuda`). The package ships it with the companion Kiln
builds from it (_ops.kiln.cpython-*.so), which holds the kernels compiled
for the signatures kiln-signatures.toml records."""
import numpy as np
from kiln import cuda

THREADS = 128
# Computed when the module is imported: the kernel reads it as a constant array.
WEIGHTS = np.linspace(0.5, 2.0, 4)


@cuda.jit
def weigh(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * WEIGHTS[i % WEIGHTS.size]


def weighed(x):
    """x times WEIGHTS, repeated along x."""
    out = np.empty_like(x)
    weigh[(x.size + THREADS - 1) // THREADS, THREADS](out, x)
    return out
