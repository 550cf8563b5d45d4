# A module that stays Python: host code beside a kernel, built into the
# companion _blend.kiln<EXT_SUFFIX> its kernel loads. The build imports the
# module to read what its host code computes (WEIGHTS).
import numpy as np
from kiln import cuda

WEIGHTS = np.full(4, 0.75)


@cuda.jit("void(float64[::1], float64[::1])")
def blend(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = WEIGHTS[i % 4] * x[i] + 1.0


def blended(x):
    out = np.empty_like(x)
    blend[(x.size + 127) // 128, 128](x, out)
    return out
