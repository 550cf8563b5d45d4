"""CUDA ufuncs written with ``@vectorize(..., target='cuda')``.

Sources:

* ``gaussian_pdf``, ``polar_to_cartesian`` / ``polar_distance`` and
  ``add_ufunc``: the introductory notebook "Explore Numba - aka. Numpy for GPU"
  (sections "Making ufuncs", "CUDA with Numba" and "Managing GPU Memory").
* ``rel_diff``: "Numba for CUDA Programmers", session 1, "Example 2 - vectorize"
  and "Example 2 continued - prioritizing types".

What it shows:

* a module-level NumPy scalar constant (``SQRT_2PI``) that Numba freezes into
  the compiled code as a float32 constant;
* a device function that returns a tuple, unpacked by its caller (a ufunc);
* ufuncs with several signatures, written both as strings and as Numba type
  expressions. For the CUDA target the signature list is mandatory, and its
  order matters: at call time the first signature the arguments can be
  safely cast to is chosen, so float32 comes before float64.

Each signature is compiled as a scalar device function (the "core") that the
generated elementwise kernel calls.
"""

import math

import numpy as np
from numba import cuda, float32, float64, vectorize

# Frozen into the compiled code at compile time (a float32 constant).
SQRT_2PI = np.float32((2 * math.pi) ** 0.5)


@vectorize(["float32(float32, float32, float32)"], target="cuda")
def gaussian_pdf(x, mean, sigma):
    """Value of a Gaussian probability density function at x with given mean and sigma."""
    return math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI)


@cuda.jit(device=True)
def polar_to_cartesian(rho, theta):
    """Convert polar coordinates to a cartesian (x, y) tuple."""
    x = rho * math.cos(theta)
    y = rho * math.sin(theta)
    return x, y  # This is Python, so let's return a tuple


@vectorize(["float32(float32, float32, float32, float32)"], target="cuda")
def polar_distance(rho1, theta1, rho2, theta2):
    """Euclidean distance between two points given in polar coordinates."""
    x1, y1 = polar_to_cartesian(rho1, theta1)
    x2, y2 = polar_to_cartesian(rho2, theta2)

    return ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5


@vectorize(["float32(float32, float32)", "int64(int64, int64)"], target="cuda")
def add_ufunc(x, y):
    """Elementwise addition."""
    return x + y


@vectorize([float32(float32, float32), float64(float64, float64)], target="cuda")
def rel_diff(x, y):
    """Relative difference of two scalars."""
    return 2 * (x - y) / (x + y)
