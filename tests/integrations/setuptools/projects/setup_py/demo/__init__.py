"""A package whose kernels ship precompiled (see setup.py)."""


def scaled_sum(a, x, y):
    """a * x + y, on whatever device Kiln picked."""
    import numpy as np

    from demo.kernels import saxpy

    out = np.empty_like(x)
    saxpy.forall(x.size)(a, x, y, out)
    return out
