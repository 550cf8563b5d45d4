"""Great-circle (haversine) distance as a device function applied over arrays.

Source: the "Accelerated Python with Numba" talk, "Example 1 - UDF
performance in cudf and dask-sql": a cuDF row-wise UDF from the weather
notebook. Here the row accesses (``row["lat1"]``, ``row["lon1"]``) become
scalar parameters of a device function, and a grid-stride kernel applies it
to columns of latitudes / longitudes against one target point.

What it shows:

* ``math.sin`` / ``math.cos`` / ``math.asin`` / ``math.sqrt`` and ``** 2``;
* ``math.pi / 180`` degree-to-radian conversions (a float64 constant, so a
  float32 input is widened to float64) and the integer constant ``r = 6371``;
* a kernel with two signatures (a list), so the device function is
  specialized twice: once for float32 and once for float64 arguments.

Host side: ``lat1``, ``lon1`` and ``out`` are fresh NumPy (or cuDF column)
arrays of one float dtype, the target point is two scalars of the same dtype.
"""

import math

from numba import cuda


@cuda.jit(device=True)
def haversine_dist(lat1, lon1, lat2, lon2):
    """Distance in kilometres between two (latitude, longitude) points in degrees."""
    x_1 = math.pi / 180 * lat1
    y_1 = math.pi / 180 * lon1
    x_2 = math.pi / 180 * lat2
    y_2 = math.pi / 180 * lon2

    dlon = y_2 - y_1
    dlat = x_2 - x_1
    a = math.sin(dlat / 2) ** 2 + math.cos(x_1) * math.cos(x_2) * math.sin(dlon / 2) ** 2

    c = 2 * math.asin(math.sqrt(a))
    r = 6371  # Radius of earth in kilometers

    return c * r


@cuda.jit(
    [
        "void(float32[::1], float32[::1], float32, float32, float32[::1])",
        "void(float64[::1], float64[::1], float64, float64, float64[::1])",
    ]
)
def haversine(lat1, lon1, target_latitude, target_longitude, out):
    """out[i] = distance from (lat1[i], lon1[i]) to the target point."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        out[i] = haversine_dist(lat1[i], lon1[i], target_latitude, target_longitude)
