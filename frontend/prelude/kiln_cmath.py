"""Kiln's cmath: the complex functions of Python's cmath module for kernels.

The front end calls these where a kernel calls cmath.<name>; they are compiled
like any kernel module, for every target. They compute in double precision
and follow CPython's principal branches for finite arguments.
"""

import math

from numba import cuda, float64


@cuda.jit(device=True)
def exp(z):
    x = float64(z.real)
    y = float64(z.imag)
    magnitude = math.exp(x)
    if y == 0.0:
        return complex(magnitude, y)
    return complex(magnitude * math.cos(y), magnitude * math.sin(y))


@cuda.jit(device=True)
def log(z, base=None):
    x = float64(z.real)
    y = float64(z.imag)
    result = complex(math.log(math.hypot(x, y)), math.atan2(y, x))
    if base is None:
        return result
    return result / log(base)


@cuda.jit(device=True)
def log10(z):
    return log(z) / math.log(10.0)


@cuda.jit(device=True)
def sqrt(z):
    x = float64(z.real)
    y = float64(z.imag)
    if x == 0.0 and y == 0.0:
        return complex(0.0, y)
    t = math.sqrt((abs(x) + math.hypot(x, y)) * 0.5)
    if x >= 0.0:
        return complex(t, y / (2.0 * t))
    return complex(abs(y) / (2.0 * t), math.copysign(t, y))


@cuda.jit(device=True)
def sin(z):
    x = float64(z.real)
    y = float64(z.imag)
    return complex(math.sin(x) * math.cosh(y), math.cos(x) * math.sinh(y))


@cuda.jit(device=True)
def cos(z):
    x = float64(z.real)
    y = float64(z.imag)
    return complex(math.cos(x) * math.cosh(y), -math.sin(x) * math.sinh(y))


@cuda.jit(device=True)
def tan(z):
    x = float64(z.real)
    y = float64(z.imag)
    denominator = math.cos(2.0 * x) + math.cosh(2.0 * y)
    return complex(math.sin(2.0 * x) / denominator, math.sinh(2.0 * y) / denominator)


@cuda.jit(device=True)
def sinh(z):
    x = float64(z.real)
    y = float64(z.imag)
    return complex(math.sinh(x) * math.cos(y), math.cosh(x) * math.sin(y))


@cuda.jit(device=True)
def cosh(z):
    x = float64(z.real)
    y = float64(z.imag)
    return complex(math.cosh(x) * math.cos(y), math.sinh(x) * math.sin(y))


@cuda.jit(device=True)
def tanh(z):
    x = float64(z.real)
    y = float64(z.imag)
    denominator = math.cosh(2.0 * x) + math.cos(2.0 * y)
    return complex(math.sinh(2.0 * x) / denominator, math.sin(2.0 * y) / denominator)


@cuda.jit(device=True)
def asinh(z):
    w = complex(float64(z.real), float64(z.imag))
    return log(w + sqrt(w * w + 1.0))


@cuda.jit(device=True)
def acosh(z):
    w = complex(float64(z.real), float64(z.imag))
    return log(w + sqrt(w + 1.0) * sqrt(w - 1.0))


@cuda.jit(device=True)
def atanh(z):
    w = complex(float64(z.real), float64(z.imag))
    return 0.5 * log((1.0 + w) / (1.0 - w))


@cuda.jit(device=True)
def asin(z):
    # asin(z) = -i asinh(i z)
    w = asinh(complex(-float64(z.imag), float64(z.real)))
    return complex(w.imag, -w.real)


@cuda.jit(device=True)
def acos(z):
    w = asin(z)
    return complex(math.pi / 2.0 - w.real, -w.imag)


@cuda.jit(device=True)
def atan(z):
    # atan(z) = -i atanh(i z)
    w = atanh(complex(-float64(z.imag), float64(z.real)))
    return complex(w.imag, -w.real)


@cuda.jit(device=True)
def phase(z):
    return math.atan2(z.imag, z.real)


@cuda.jit(device=True)
def polar(z):
    return math.hypot(z.real, z.imag), math.atan2(z.imag, z.real)


@cuda.jit(device=True)
def rect(r, phi):
    return complex(r * math.cos(phi), r * math.sin(phi))


@cuda.jit(device=True)
def isnan(z):
    return math.isnan(z.real) or math.isnan(z.imag)


@cuda.jit(device=True)
def isinf(z):
    return math.isinf(z.real) or math.isinf(z.imag)


@cuda.jit(device=True)
def isfinite(z):
    return math.isfinite(z.real) and math.isfinite(z.imag)
