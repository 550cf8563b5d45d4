"""Kiln's cmath: the complex functions of Python's cmath module for kernels.

The front end calls these where a kernel calls cmath.<name> (and log_base
for cmath.log(z, base)); they are compiled like any kernel module, for
every target. They are numba-cuda's implementations (cpython/cmathimpl.py,
themselves CPython's algorithms from cmathmodule.c and NumPy's csqrt), so
that branch cuts, signed zeros, infinities and NaNs come out as in Numba,
and results stay accurate where the textbook formulas cancel (asinh of a
large negative number, atanh near 0). They compute in double precision
whatever the argument's precision; the front end rounds the result to the
type Numba gives it.
"""

import math

from numba import cuda, float64

INF = math.inf
NAN = math.nan
HALF_PI = math.pi / 2.0
LN_4 = math.log(4.0)
LN_10 = 2.302585092994045684
# numba-cuda's thresholds, in terms of float32's range as there.
FLT_MAX = 3.4028234663852886e38
FLT_MIN = 1.1754943508222875e-38
LARGE = FLT_MAX / 4.0
ATANH_LARGE = math.sqrt(FLT_MAX / 4.0)
ATANH_SMALL = math.sqrt(FLT_MIN)
# csqrt scales arguments this large to avoid overflow: DBL_MAX / (1 + sqrt(2)).
SQRT_LARGE = 1.7976931348623157e308 / (1.0 + math.sqrt(2.0))


@cuda.jit(device=True)
def exp(z):
    x = float64(z.real)
    y = float64(z.imag)
    if math.isfinite(x):
        if math.isfinite(y):
            r = math.exp(x)
            return complex(r * math.cos(y), r * math.sin(y))
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
        return complex(r * math.cos(y), r * math.sin(y))
    return complex(0.0, 0.0)


@cuda.jit(device=True)
def log(z):
    x = float64(z.real)
    y = float64(z.imag)
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
    a = float64(z.real)
    b = float64(z.imag)
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
    if abs(a) >= SQRT_LARGE or abs(b) >= SQRT_LARGE:
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
    x = float64(z.real)
    y = float64(z.imag)
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
    x = float64(z.real)
    y = float64(z.imag)
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
    x = float64(z.real)
    y = float64(z.imag)
    if math.isinf(x):
        imag = 0.0
        if not math.isinf(y):
            imag = math.copysign(0.0, math.sin(2.0 * y))
        return complex(math.copysign(1.0, x), imag)
    # CPython's c_tanh.
    tx = math.tanh(x)
    ty = math.tan(y)
    cx = 1.0 / math.cosh(x)
    txty = tx * ty
    denominator = 1.0 + txty * txty
    return complex(tx * (1.0 + ty * ty) / denominator, ((ty / denominator) * cx) * cx)


@cuda.jit(device=True)
def cos(z):
    # cos(z) = cosh(iz)
    return cosh(complex(-float64(z.imag), float64(z.real)))


@cuda.jit(device=True)
def sin(z):
    # sin(z) = -i sinh(iz)
    r = sinh(complex(-float64(z.imag), float64(z.real)))
    return complex(r.imag, -r.real)


@cuda.jit(device=True)
def tan(z):
    # tan(z) = -i tanh(iz)
    r = tanh(complex(-float64(z.imag), float64(z.real)))
    return complex(r.imag, -r.real)


@cuda.jit(device=True)
def acos(z):
    # CPython's c_acos.
    x = float64(z.real)
    y = float64(z.imag)
    if abs(x) > LARGE or abs(y) > LARGE:
        # Avoids overflow for large arguments, and handles infinities.
        real = math.atan2(abs(y), x)
        imag = math.copysign(math.log(math.hypot(x * 0.5, y * 0.5)) + LN_4, -y)
        return complex(real, imag)
    s1 = sqrt(complex(1.0 - x, -y))
    s2 = sqrt(complex(1.0 + x, y))
    real = 2.0 * math.atan2(s1.real, s2.real)
    imag = math.asinh(s2.real * s1.imag - s2.imag * s1.real)
    return complex(real, imag)


@cuda.jit(device=True)
def acosh(z):
    # CPython's c_acosh.
    x = float64(z.real)
    y = float64(z.imag)
    if abs(x) > LARGE or abs(y) > LARGE:
        real = math.log(math.hypot(x * 0.5, y * 0.5)) + LN_4
        return complex(real, math.atan2(y, x))
    s1 = sqrt(complex(x - 1.0, y))
    s2 = sqrt(complex(x + 1.0, y))
    real = math.asinh(s1.real * s2.real + s1.imag * s2.imag)
    imag = 2.0 * math.atan2(s1.imag, s2.real)
    return complex(real, imag)


@cuda.jit(device=True)
def asinh(z):
    # CPython's c_asinh.
    x = float64(z.real)
    y = float64(z.imag)
    if abs(x) > LARGE or abs(y) > LARGE:
        real = math.copysign(math.log(math.hypot(x * 0.5, y * 0.5)) + LN_4, x)
        return complex(real, math.atan2(y, abs(x)))
    s1 = sqrt(complex(1.0 + y, -x))
    s2 = sqrt(complex(1.0 - y, x))
    real = math.asinh(s1.real * s2.imag - s2.real * s1.imag)
    imag = math.atan2(y, s1.real * s2.real - s1.imag * s2.imag)
    return complex(real, imag)


@cuda.jit(device=True)
def asin(z):
    # asin(z) = -i asinh(iz)
    r = asinh(complex(-float64(z.imag), float64(z.real)))
    return complex(r.imag, -r.real)


@cuda.jit(device=True)
def atanh(z):
    # CPython's c_atanh, reduced to a non-negative real part with
    # atanh(z) = -atanh(-z).
    x = float64(z.real)
    y = float64(z.imag)
    negate = x < 0.0
    if negate:
        x = -x
        y = -y
    ay = abs(y)
    if math.isnan(x) or x > ATANH_LARGE or ay > ATANH_LARGE:
        if math.isinf(y):
            real = math.copysign(0.0, x)
        elif math.isinf(x):
            real = 0.0
        else:
            h = math.hypot(x * 0.5, y * 0.5)
            real = x / 4.0 / h / h
        imag = -math.copysign(HALF_PI, -y)
    elif x == 1.0 and ay < ATANH_SMALL:
        # C99: atanh(1 +- 0j) is inf +- 0j.
        if ay == 0.0:
            real = INF
            imag = y
        else:
            real = -math.log(math.sqrt(ay) / math.sqrt(math.hypot(ay, 2.0)))
            imag = math.copysign(math.atan2(2.0, -ay) / 2.0, y)
    else:
        squared = ay * ay
        complement = 1.0 - x
        real = math.log1p(4.0 * x / (complement * complement + squared)) * 0.25
        imag = -math.atan2(-2.0 * y, complement * (1.0 + x) - squared) * 0.5
    if math.isnan(y):
        imag = NAN
    if negate:
        return complex(-real, -imag)
    return complex(real, imag)


@cuda.jit(device=True)
def atan(z):
    # atan(z) = -i atanh(iz)
    x = float64(z.real)
    y = float64(z.imag)
    r = atanh(complex(-y, x))
    if math.isinf(x) and math.isnan(y):
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
    r = float64(r)
    phi = float64(phi)
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
