"""Every `math` function of the language reference (§3.6), in float32 and
float64, on ordinary arguments and on special ones (±0, ±inf, NaN,
subnormals, large arguments, domain edges and poles), compared with
CPython's `math` evaluated in double precision.

Tolerances. A kernel's result must be within the documented maximum error
of the math library the target calls: libdevice on a GPU (CUDA C++
Programming Guide, "Mathematical Functions", tables of maximum ulp error for
single and double precision, full range unless noted), the C library on
the CPU engine (glibc manual, "Errors in Math Functions", x86_64). The
bound used is the larger of the two, plus the reference's own error: 1 ulp
in float32 (a double result rounded to float), and glibc's bound in
float64 (CPython's math calls the same glibc functions, except gamma and
lgamma, which it implements itself to within a few ulps).

    function      CUDA f32  CUDA f64   glibc f32  glibc f64
    sin, cos          2         2          1          1
    tan               4         2          1          1
    asin, acos        2         2          1          1
    atan              2         2          1          1
    atan2             3         2          2          1
    sinh              3         2          2          2
    cosh              2         1          2          2
    tanh              2         1          2          2
    asinh             3         3          2          2
    acosh             4         3          2          2
    atanh             3         2          2          2
    exp               2         1          1          1
    exp2              2         1          1          1
    expm1             1         1          1          1
    log               1         1          1          1
    log2              1         1          1          2
    log10             2         1          2          2
    log1p             1         1          1          1
    erf               2         2          1          1
    erfc              4         5          3          5
    gamma (tgamma)    5        10          8          9
    lgamma            6         4          7          4    (CUDA: outside
                                                          (-10.001, -2.264) in f32,
                                                          (-23.0001, -2.2637) in f64,
                                                          which the arguments avoid)
    hypot             3         2          1          1
    pow               4         2          1          1
    sqrt, fabs, floor, ceil, trunc, copysign, fmod, remainder, nextafter,
    ldexp, frexp, modf: 0 (exact)

degrees and radians multiply by a rounded constant (Numba's
degrees_float_impl): 1 ulp. Results that are exactly ±0, ±inf or NaN must
match exactly, the sign of zero included (C99 Annex F, which both
libraries follow for these arguments).
"""

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

import kiln_cpu

FLOATS = ["float32", "float64"]

# name: (CUDA f32, CUDA f64, glibc f32, glibc f64)
BOUNDS = {
    "sin": (2, 2, 1, 1), "cos": (2, 2, 1, 1), "tan": (4, 2, 1, 1),
    "asin": (2, 2, 1, 1), "acos": (2, 2, 1, 1), "atan": (2, 2, 1, 1), "atan2": (3, 2, 2, 1),
    "sinh": (3, 2, 2, 2), "cosh": (2, 1, 2, 2), "tanh": (2, 1, 2, 2),
    "asinh": (3, 3, 2, 2), "acosh": (4, 3, 2, 2), "atanh": (3, 2, 2, 2),
    "exp": (2, 1, 1, 1), "exp2": (2, 1, 1, 1), "expm1": (1, 1, 1, 1),
    "log": (1, 1, 1, 1), "log2": (1, 1, 1, 2), "log10": (2, 1, 2, 2), "log1p": (1, 1, 1, 1),
    "erf": (2, 2, 1, 1), "erfc": (4, 5, 3, 5), "gamma": (5, 10, 8, 9), "lgamma": (6, 4, 7, 4),
    "hypot": (3, 2, 1, 1), "pow": (4, 2, 1, 1),
    "degrees": (1, 1, 1, 1), "radians": (1, 1, 1, 1),
}
EXACT = ["sqrt", "fabs", "floor", "ceil", "trunc", "copysign", "fmod", "remainder", "nextafter",
         "ldexp", "frexp", "modf"]


def tolerance(name, dtype):
    if name in EXACT:
        return 0
    cuda32, cuda64, glibc32, glibc64 = BOUNDS[name]
    if dtype == "float32":
        return max(cuda32, glibc32) + 1
    return max(cuda64, glibc64) + glibc64


UNARY = [
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "fabs", "floor",
    "ceil", "trunc", "erf", "erfc", "gamma", "lgamma", "degrees", "radians",
]
BINARY = ["atan2", "hypot", "copysign", "fmod", "remainder", "nextafter", "pow"]

INF = float("inf")
NAN = float("nan")


def c_math(name, *args):
    """math.<name> with C99's results where CPython raises instead."""
    x = args[0]
    if name in ("floor", "ceil", "trunc", "fabs"):
        return float(getattr(np, name)(x))  # math's give integers, losing -0.0
    if name in ("gamma", "lgamma") and math.isfinite(x) and not (x <= 0 and x.is_integer()):
        return decimal_gamma(name, x)
    try:
        return float(getattr(math, name)(*args))
    except OverflowError:
        if name in ("sinh", "ldexp", "degrees", "radians", "gamma"):
            return math.copysign(INF, x)
        if name == "pow" and x < 0 and float(args[1]).is_integer() and args[1] % 2 == 1:
            return -INF
        return INF
    except ValueError:
        if name in ("log", "log2", "log10") and x == 0:
            return -INF
        if name == "log1p" and x == -1:
            return -INF
        if name == "atanh" and abs(x) == 1:
            return math.copysign(INF, x)
        if name == "lgamma" and x <= 0 and float(x).is_integer():
            return INF
        if name == "gamma" and x == 0:
            return math.copysign(INF, x)
        if name == "pow" and x == 0 and args[1] < 0:
            odd = float(args[1]).is_integer() and args[1] % 2 == 1
            return math.copysign(INF, x) if odd else INF
        return NAN


# CPython's own gamma and lgamma are off by tens of ulps near lgamma's zeros,
# so these references are computed in 40-digit decimal arithmetic: Stirling's
# series after shifting the argument above 30, and the reflection formula
# for negative arguments.
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
              Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798),
              Fraction(-174611, 330), Fraction(854513, 138), Fraction(-236364091, 2730)]


def _decimal_lgamma_positive(x):
    shift = max(0, 40 - int(x))
    z = x + shift
    result = (z - Decimal("0.5")) * z.ln() - z + (2 * _PI).ln() / 2
    for k, b in enumerate(_BERNOULLI, start=1):
        result += Decimal(b.numerator) / Decimal(b.denominator) / (2 * k * (2 * k - 1) * z ** (2 * k - 1))
    for k in range(shift):
        result -= (x + k).ln()
    return result


def _decimal_sin_pi(x):
    angle = _PI * (x - 2 * (x / 2).to_integral_value())  # reduced to [-pi, pi] exactly
    term, total = angle, Decimal(0)
    for k in range(1, 80, 2):  # the Taylor terms are below 1e-60 of the sum by then
        total += term
        term = -term * angle * angle / ((k + 1) * (k + 2))
    return total


def decimal_gamma(name, x):
    if name == "lgamma" and x in (1.0, 2.0):
        return 0.0  # exactly; the truncated series leaves 1e-34 there
    with localcontext() as context:
        context.prec = 45
        d = Decimal(x)
        if d > 0:
            log_magnitude, negative = _decimal_lgamma_positive(d), False
        else:
            sine = _decimal_sin_pi(d)
            log_magnitude = _PI.ln() - abs(sine).ln() - _decimal_lgamma_positive(1 - d)
            negative = sine < 0
        if name == "lgamma":
            return float(log_magnitude)
        if log_magnitude > 710:
            return -INF if negative else INF
        magnitude = float(log_magnitude.exp())
        return -magnitude if negative else magnitude


def unary_arguments(dtype):
    info = np.finfo(dtype)
    large = [1e10, -1e10, 1e22, 3e38] + ([1e300, -1e300] if dtype == "float64" else [])
    values = [0.0, -0.0, INF, -INF, NAN, float(info.smallest_subnormal), -float(info.smallest_subnormal),
              float(info.tiny), 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.1, 0.75, -0.9, 1.5, -1.5, 2.5, 3.0,
              -2.25, 10.0, -10.0, 20.0, 100.0, -100.0, 1e-5, -1e-7, 1e-20, 700.0, -745.5, 0.999999,
              -25.5, 171.5, 1e5] + large
    with np.errstate(over="ignore"):
        return np.array(values, dtype=dtype)


BINARY_ARGUMENTS = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.1, 3.0, -7.0, 0.5, 1e10, -1e-3, INF, -INF, NAN]


SOURCE_HEADER = """
import math
from numba import cuda, float32, float64, int32, int64
"""

UNARY_KERNEL = """
@cuda.jit("void(T[::1], T[:, ::1])")
def unary_T(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
{rows}
"""

BINARY_KERNEL = """
@cuda.jit("void(T[::1], T[::1], T[:, ::1])")
def binary_T(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        b = y[i]
{rows}
"""

OTHER_KERNEL = """
@cuda.jit("void(T[::1], int32[::1], T[:, ::1], int32[::1], boolean[:, ::1])")
def other_T(x, n, out, exponents, truth):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[0, i] = math.ldexp(v, n[i])
        m, e = math.frexp(v)
        out[1, i] = m
        exponents[i] = e
        f, w = math.modf(v)
        out[2, i] = f
        out[3, i] = w
        truth[0, i] = math.isnan(v)
        truth[1, i] = math.isinf(v)
        truth[2, i] = math.isfinite(v)
"""

INTEGER_KERNEL = """
@cuda.jit("void(int64[::1], float64[:, ::1], boolean[:, ::1])")
def integer_arguments(n, out, truth):
    # Integer arguments convert to float64.
    i = cuda.grid(1)
    if i < n.size:
        k = n[i]
        out[0, i] = math.sqrt(k)
        out[1, i] = math.exp(k)
        out[2, i] = math.atan2(k, 3)
        out[3, i] = math.hypot(k, 4)
        out[4, i] = math.log1p(k)
        truth[0, i] = math.isnan(k)
        truth[1, i] = math.isinf(k)
        truth[2, i] = math.isfinite(k)
"""


def module_source():
    unary_rows = "\n".join(f"        out[{r}, i] = math.{name}(v)" for r, name in enumerate(UNARY))
    binary_rows = "\n".join(f"        out[{r}, i] = math.{name}(a, b)" for r, name in enumerate(BINARY))
    parts = [SOURCE_HEADER, INTEGER_KERNEL]
    for t in FLOATS:
        for template in (UNARY_KERNEL.replace("{rows}", unary_rows),
                         BINARY_KERNEL.replace("{rows}", binary_rows), OTHER_KERNEL):
            parts.append(template.replace("T[", t + "[").replace("_T(", f"_{t}("))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return kiln_cpu.compile_source(module_source(), tmp_path_factory.mktemp("math"))


def launch(kernel, count, *arguments):
    kernel[max(1, (count + 63) // 64), 64](*arguments)


def ordered(value, dtype):
    bits = {"float32": np.int32, "float64": np.int64}[dtype]
    i = int(np.array(value, dtype=dtype).view(bits))
    return i if i >= 0 else -(i & ((1 << (8 * np.dtype(bits).itemsize - 1)) - 1))


def check(name, dtype, actual, arguments, reference):
    ulps = tolerance(name, dtype)
    bad = []
    for got, args in zip(actual.tolist(), arguments):
        with np.errstate(over="ignore", under="ignore"):
            want = np.array(reference(*args), dtype=dtype)
        got = np.array(got, dtype=dtype)
        if np.isnan(want) or np.isinf(want) or want == 0:
            ok = (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want))
        else:
            ok = np.isfinite(got) and abs(ordered(got, dtype) - ordered(want, dtype)) <= ulps
        if not ok:
            bad.append(f"math.{name}{tuple(args)} in {dtype}: got {got!r}, expected {want!r} (within {ulps} ulp)")
    assert not bad, f"{len(bad)} wrong results, first ones:\n" + "\n".join(bad[:10])


@pytest.fixture(scope="module")
def unary_results(kernels):
    results = {}
    for dtype in FLOATS:
        x = unary_arguments(dtype)
        out = np.zeros((len(UNARY), x.size), dtype=dtype)
        launch(getattr(kernels, f"unary_{dtype}"), x.size, x, out)
        results[dtype] = (x, out)
    return results


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", UNARY)
def test_unary(unary_results, name, dtype):
    x, out = unary_results[dtype]
    check(name, dtype, out[UNARY.index(name)], [(float(v),) for v in x], lambda v: c_math(name, v))


@pytest.fixture(scope="module")
def binary_results(kernels):
    results = {}
    for dtype in FLOATS:
        grid = [(a, b) for a in BINARY_ARGUMENTS for b in BINARY_ARGUMENTS]
        x = np.array([g[0] for g in grid], dtype=dtype)
        y = np.array([g[1] for g in grid], dtype=dtype)
        out = np.zeros((len(BINARY), x.size), dtype=dtype)
        launch(getattr(kernels, f"binary_{dtype}"), x.size, x, y, out)
        results[dtype] = (x, y, out)
    return results


def nextafter_reference(dtype):
    # nextafter steps to the neighbouring value of the argument's own type.
    def reference(a, b):
        return np.nextafter(np.array(a, dtype=dtype), np.array(b, dtype=dtype))

    return reference


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", BINARY)
def test_binary(binary_results, name, dtype):
    x, y, out = binary_results[dtype]
    reference = nextafter_reference(dtype) if name == "nextafter" else (lambda a, b: c_math(name, a, b))
    check(name, dtype, out[BINARY.index(name)], list(zip(x.tolist(), y.tolist())), reference)


LDEXP_EXPONENTS = [0, 1, -1, 10, -10, 100, -100, 127, 128, -149, -150, 200, -200, 1023, 1024, -1074, -1075, 2000]


@pytest.mark.parametrize("dtype", FLOATS)
def test_ldexp_frexp_modf_and_classification(kernels, dtype):
    base = unary_arguments(dtype).tolist() + [1.75, -3.0, 0.3, 6.5e-5]
    grid = [(b, e) for b in base for e in LDEXP_EXPONENTS]
    x = np.array([g[0] for g in grid], dtype=dtype)
    n = np.array([g[1] for g in grid], dtype=np.int32)
    out = np.zeros((4, x.size), dtype=dtype)
    exponents = np.zeros(x.size, dtype=np.int32)
    truth = np.zeros((3, x.size), dtype=np.bool_)
    launch(getattr(kernels, f"other_{dtype}"), x.size, x, n, out, exponents, truth)
    t = np.dtype(dtype).type
    # ldexp rounds once, in the argument's type (np.ldexp does as well).
    with np.errstate(over="ignore", under="ignore"):
        check("ldexp", dtype, out[0], list(zip(x.tolist(), n.tolist())), lambda v, e: np.ldexp(t(v), e))
    check("frexp", dtype, out[1], [(v,) for v in x.tolist()], lambda v: math.frexp(v)[0])
    check("modf", dtype, out[2], [(v,) for v in x.tolist()],
          lambda v: math.copysign(0.0, v) if math.isinf(v) else math.modf(v)[0])
    check("modf", dtype, out[3], [(v,) for v in x.tolist()], lambda v: math.modf(v)[1])
    finite = np.isfinite(x)
    wrong = [(v, e, math.frexp(float(v))[1]) for v, e in zip(x[finite], exponents[finite])
             if e != math.frexp(float(v))[1]]
    assert not wrong, f"math.frexp exponents in {dtype} (value, got, expected): {wrong[:10]}"
    for row, (name, reference) in enumerate([("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]):
        mismatched = [v for v, got in zip(x.tolist(), truth[row].tolist()) if got != bool(reference(v))]
        assert not mismatched, f"math.{name} in {dtype} is wrong for {mismatched[:10]}"


def test_integer_arguments(kernels):
    n = np.array([0, 1, 2, 3, 4, -1, 100, 2**53 + 1, -(2**62)], dtype=np.int64)
    out = np.zeros((5, n.size))
    truth = np.zeros((3, n.size), dtype=np.bool_)
    launch(kernels.integer_arguments, n.size, n, out, truth)
    values = [(float(k),) for k in n.tolist()]
    check("sqrt", "float64", out[0], values, lambda v: c_math("sqrt", v))
    check("exp", "float64", out[1], values, lambda v: c_math("exp", v))
    check("atan2", "float64", out[2], values, lambda v: c_math("atan2", v, 3.0))
    check("hypot", "float64", out[3], values, lambda v: c_math("hypot", v, 4.0))
    check("log1p", "float64", out[4], values, lambda v: c_math("log1p", v))
    assert not truth[0].any() and not truth[1].any() and truth[2].all(), "math.isnan/isinf/isfinite of integers"
