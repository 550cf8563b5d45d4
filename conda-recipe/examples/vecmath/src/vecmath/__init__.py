"""A tiny package shipping precompiled Kiln kernels (conda-recipe/examples)."""
import numpy as np

from vecmath.kernels import SCALE, axpy
from vecmath.ops import weighed

__all__ = ["axpy", "scaled_axpy", "weighed"]


def scaled_axpy(a, x, y):
    """Returns SCALE * (a * x + y), computed by the axpy kernel."""
    out = np.empty_like(x)
    axpy[(x.size + 127) // 128, 128](x.dtype.type(a), x, y, out)
    return SCALE * out
