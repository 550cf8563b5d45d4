"""Kiln's cmath: the complex functions of Python's cmath module for kernels.

The front end calls these where a kernel calls cmath.<name> (and log_base
for cmath.log(z, base)); they are compiled like any kernel module, for
every target, once per argument type. They are numba-cuda's
implementations (cpython/cmathimpl.py, themselves CPython's algorithms
from cmathmodule.c and NumPy's csqrt), written as there and typed by the
same rules, so that branch cuts, signed zeros, infinities and NaNs come out
as in Numba, and so does precision: a complex64 argument is computed on in
float32 wherever Numba does (cos, sin, exp, log, hypot of its parts) and in
float64 wherever a float64 constant widens it (tanh's quotient, the square
roots inside acos). The front end rounds each result to the type Numba
gives it.

One departure: sqrt of an argument so large that it is scaled down by 4
before the square root is scaled back up by 2 in both parts, as C99's and
CPython's csqrt; numba-cuda's port of NumPy's npy_csqrt rescales only the
real part, which leaves the imaginary part half the right value.
"""

import math

from numba import complex64, cuda

INF = math.inf
NAN = math.nan
HALF_PI = math.pi / 2.0
LN_4 = math.log(4.0)
LN_10 = 2.302585092994045684
# numba-cuda's thresholds, in terms of float32's range as there.
FLT_MAX = 3.4028234663852886e38
FLT_MIN = 1.1754943508222875e-38
DBL_MAX = 1.7976931348623157e308
LARGE = FLT_MAX / 4.0
ATANH_LARGE = math.sqrt(FLT_MAX / 4.0)
ATANH_SMALL = math.sqrt(FLT_MIN)
# csqrt scales arguments from MAX / (1 + sqrt(2)) of the parts' type down
# to avoid overflow.
SQRT_LARGE_FLOAT32 = FLT_MAX / (1.0 + math.sqrt(2.0))
SQRT_LARGE_FLOAT64 = DBL_MAX / (1.0 + math.sqrt(2.0))


@cuda.jit(device=True)
def exp(z):
    x = z.real
    y = z.imag
    if math.isfinite(x):
        if math.isfinite(y):
            c = math.cos(y)
            s = math.sin(y)
            r = math.exp(x)
            return complex(r * c, r * s)
        return complex(NAN, NAN)
    if math.isnan(x):
        if y != 0.0:
            return complex(x, x)
        return complex(x, y)
    if x > 0.0:
        if math.isfinite(y):
            # Keep exact zeros: exp(inf + 0j) is inf + 0j, not inf + nanj.
            real = math.cos(y)
            imag = math.sin(y)
            if real != 0.0:
                real *= x
            if imag != 0.0:
                imag *= x
            return complex(real, imag)
        return complex(x, NAN)
    if math.isfinite(y):
        r = math.exp(x)
        c = math.cos(y)
        s = math.sin(y)
        return complex(r * c, r * s)
    return complex(0.0, 0.0)


@cuda.jit(device=True)
def log(z):
    x = z.real
    y = z.imag
    return complex(math.log(math.hypot(x, y)), math.atan2(y, x))


@cuda.jit(device=True)
def log_base(z, base):
    return log(z) / log(base)


@cuda.jit(device=True)
def log10(z):
    # Dividing the parts behaves better on infinities than log(z, 10).
    w = log(z)
    return complex(w.real / LN_10, w.imag / LN_10)


@cuda.jit(device=True)
def sqrt(z):
    # NumPy's npy_csqrt (Algorithm 312, CACM vol. 10, Oct. 1967).
    large = SQRT_LARGE_FLOAT32 if isinstance(z, complex64) else SQRT_LARGE_FLOAT64
    a = z.real
    b = z.imag
    if a == 0.0 and b == 0.0:
        return complex(abs(b), b)
    if math.isinf(b):
        return complex(abs(b), b)
    if math.isnan(a):
        return complex(a, a)
    if math.isinf(a):
        if a < 0.0:
            return complex(abs(b - b), math.copysign(a, b))
        return complex(a, math.copysign(b - b, b))
    scale = 1.0
    if abs(a) >= large or abs(b) >= large:
        a *= 0.25
        b *= 0.25
        scale = 2.0
    if a >= 0.0:
        t = math.sqrt((a + math.hypot(a, b)) * 0.5)
        return complex(t * scale, b / (2.0 * t) * scale)
    t = math.sqrt((-a + math.hypot(a, b)) * 0.5)
    return complex(abs(b) / (2.0 * t) * scale, math.copysign(t, b) * scale)


@cuda.jit(device=True)
def cosh(z):
    x = z.real
    y = z.imag
    if math.isinf(x):
        if math.isnan(y) or y == 0.0:
            real = abs(x)
            imag = y
        else:
            real = math.copysign(x, math.cos(y))
            imag = math.copysign(x, math.sin(y))
        if x < 0.0:
            imag = -imag
        return complex(real, imag)
    return complex(math.cos(y) * math.cosh(x), math.sin(y) * math.sinh(x))


@cuda.jit(device=True)
def sinh(z):
    x = z.real
    y = z.imag
    if math.isinf(x):
        if math.isnan(y):
            return complex(x, y)
        real = math.cos(y)
        imag = math.sin(y)
        if real != 0.0:
            real *= x
        if imag != 0.0:
            imag *= abs(x)
        return complex(real, imag)
    return complex(math.cos(y) * math.sinh(x), math.sin(y) * math.cosh(x))


@cuda.jit(device=True)
def tanh(z):
    x = z.real
    y = z.imag
    if math.isinf(x):
        real = math.copysign(1.0, x)
        if math.isinf(y):
            imag = 0.0
        else:
            imag = math.copysign(0.0, math.sin(2.0 * y))
        return complex(real, imag)
    # CPython's c_tanh; its float64 constants widen a complex64's quotient.
    tx = math.tanh(x)
    ty = math.tan(y)
    cx = 1.0 / math.cosh(x)
    txty = tx * ty
    denominator = 1.0 + txty * txty
    return complex(tx * (1.0 + ty * ty) / denominator, ((ty / denominator) * cx) * cx)


@cuda.jit(device=True)
def cos(z):
    # cos(z) = cosh(iz)
    return cosh(complex(-z.imag, z.real))


@cuda.jit(device=True)
def sin(z):
    # sin(z) = -i sinh(iz)
    r = sinh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


@cuda.jit(device=True)
def tan(z):
    # tan(z) = -i tanh(iz)
    r = tanh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


@cuda.jit(device=True)
def acos(z):
    # CPython's c_acos.
    if abs(z.real) > LARGE or abs(z.imag) > LARGE:
        # Avoids overflow for large arguments, and handles infinities.
        real = math.atan2(abs(z.imag), z.real)
        imag = math.copysign(math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4, -z.imag)
        return complex(real, imag)
    s1 = sqrt(complex(1.0 - z.real, -z.imag))
    s2 = sqrt(complex(1.0 + z.real, z.imag))
    real = 2.0 * math.atan2(s1.real, s2.real)
    imag = math.asinh(s2.real * s1.imag - s2.imag * s1.real)
    return complex(real, imag)


@cuda.jit(device=True)
def acosh(z):
    # CPython's c_acosh.
    if abs(z.real) > LARGE or abs(z.imag) > LARGE:
        real = math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4
        imag = math.atan2(z.imag, z.real)
        return complex(real, imag)
    s1 = sqrt(complex(z.real - 1.0, z.imag))
    s2 = sqrt(complex(z.real + 1.0, z.imag))
    real = math.asinh(s1.real * s2.real + s1.imag * s2.imag)
    imag = 2.0 * math.atan2(s1.imag, s2.real)
    return complex(real, imag)


@cuda.jit(device=True)
def asinh(z):
    # CPython's c_asinh.
    if abs(z.real) > LARGE or abs(z.imag) > LARGE:
        real = math.copysign(math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4, z.real)
        imag = math.atan2(z.imag, abs(z.real))
        return complex(real, imag)
    s1 = sqrt(complex(1.0 + z.imag, -z.real))
    s2 = sqrt(complex(1.0 - z.imag, z.real))
    real = math.asinh(s1.real * s2.imag - s2.real * s1.imag)
    imag = math.atan2(z.imag, s1.real * s2.real - s1.imag * s2.imag)
    return complex(real, imag)


@cuda.jit(device=True)
def asin(z):
    # asin(z) = -i asinh(iz)
    r = asinh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


@cuda.jit(device=True)
def atanh(z):
    # CPython's c_atanh, reduced to a non-negative real part with
    # atanh(z) = -atanh(-z).
    negate = z.real < 0.0
    if negate:
        z = -z
    ay = abs(z.imag)
    if math.isnan(z.real) or z.real > ATANH_LARGE or ay > ATANH_LARGE:
        if math.isinf(z.imag):
            real = math.copysign(0.0, z.real)
        elif math.isinf(z.real):
            real = 0.0
        else:
            h = math.hypot(z.real * 0.5, z.imag * 0.5)
            real = z.real / 4.0 / h / h
        imag = -math.copysign(HALF_PI, -z.imag)
    elif z.real == 1.0 and ay < ATANH_SMALL:
        # C99: atanh(1 +- 0j) is inf +- 0j.
        if ay == 0.0:
            real = INF
            imag = z.imag
        else:
            real = -math.log(math.sqrt(ay) / math.sqrt(math.hypot(ay, 2.0)))
            imag = math.copysign(math.atan2(2.0, -ay) / 2, z.imag)
    else:
        # The square stays in the parts' type, as in Numba; the integer 1
        # widens the rest to float64.
        squared = ay * ay
        complement = 1 - z.real
        real = math.log1p(4.0 * z.real / (complement * complement + squared)) * 0.25
        imag = -math.atan2(-2.0 * z.imag, complement * (1 + z.real) - squared) * 0.5
    if math.isnan(z.imag):
        imag = NAN
    if negate:
        return complex(-real, -imag)
    return complex(real, imag)


@cuda.jit(device=True)
def atan(z):
    # atan(z) = -i atanh(iz)
    r = atanh(complex(-z.imag, z.real))
    if math.isinf(z.real) and math.isnan(z.imag):
        return complex(r.imag, r.real)
    return complex(r.imag, -r.real)


@cuda.jit(device=True)
def phase(z):
    return math.atan2(z.imag, z.real)


@cuda.jit(device=True)
def polar(z):
    return math.hypot(z.real, z.imag), math.atan2(z.imag, z.real)


@cuda.jit(device=True)
def rect(r, phi):
    if not math.isfinite(phi):
        if r == 0.0:
            # rect(0, inf or nan) is 0.
            return complex(abs(r), 0.0)
        if math.isinf(r):
            return complex(r, phi)
    real = math.cos(phi)
    imag = math.sin(phi)
    # 0 * inf would give NaN: keep the zero, with the product's sign.
    if real == 0.0 and math.isinf(r):
        real /= r
    else:
        real *= r
    if imag == 0.0 and math.isinf(r):
        imag /= r
    else:
        imag *= r
    return complex(real, imag)


@cuda.jit(device=True)
def isnan(z):
    return math.isnan(z.real) or math.isnan(z.imag)


@cuda.jit(device=True)
def isinf(z):
    return math.isinf(z.real) or math.isinf(z.imag)


@cuda.jit(device=True)
def isfinite(z):
    return math.isfinite(z.real) and math.isfinite(z.imag)
