"""Round to a number of decimal places (cuDF's ``gpu_round``), used with forall.

Source: "Numba for CUDA Programmers", session 3, "ForAll usage" (example
borrowed from cuDF), and "The ForAll Generator" in the session 3 notebook,
which also gives the ``rint`` device function. The course launches it with
``gpu_round.forall(nelems)(in_data, out_data, 3)`` on device copies of
``np.random.random(10)``: float64 arrays and a Python int (int64) decimal count.

What it shows:

* ``from math import floor``: a math function imported by name;
* a device function returning a float with round-half-to-even logic and
  in-place ``+=`` on a local;
* integer power ``10 ** decimal`` (int64 ** int64) mixed into float64
  arithmetic; ``in_col.size`` as the bounds check.
"""

from math import floor

from numba import cuda, float64, int64, void


@cuda.jit(device=True)
def rint(x):
    """Round to the nearest integer.

    Returns
    -------
    The nearest integer, as a float.
    """
    y = floor(x)
    r = x - y

    if r > 0.5:
        y += 1.0
    if r == 0.5:
        r = y - 2.0 * floor(0.5 * y)
        if r == 1.0:
            y += 1.0
    return y


@cuda.jit(void(float64[::1], float64[::1], int64))
def gpu_round(in_col, out_col, decimal):
    """out_col[i] = in_col[i] rounded to `decimal` decimal places."""
    i = cuda.grid(1)
    f = 10**decimal

    if i < in_col.size:
        ret = in_col[i] * f
        ret = rint(ret)
        tmp = ret / f
        out_col[i] = tmp
