"""Complex numbers on the CPU engine: arithmetic, abs, conjugate, parts and
comparisons in complex64 and complex128 against Python's complex, and every
`cmath` function of the language reference (§3.6) against CPython's cmath.

Addition, subtraction, negation, conjugation and the parts are exact.
Products, quotients, powers and the cmath functions are compared
componentwise, relative to the magnitude of the whole result: each part
within K * eps * |expected| (eps of the operands' float type). K is 8 for
arithmetic (a product rounds twice; a GPU may fuse it) and 16 for the
functions, whose CPython algorithms (which Numba ports) chain several
library calls of a few ulp each; the CUDA documentation gives no bound for
complex functions. Where CPython raises (poles, overflow) nothing is
compared; the C99 Annex G values at those points are tested separately.
"""

import cmath
import itertools
import math

import numpy as np
import pytest

import kiln_cpu

COMPLEX = ["complex64", "complex128"]
PART = {"complex64": "float32", "complex128": "float64"}

PARTS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 1e-8, -1e-8, 10.0, -25.0, 0.9999]
INF = float("inf")
NAN = float("nan")


def grid(dtype, parts=PARTS):
    values = [complex(re, im) for re, im in itertools.product(parts, repeat=2)]
    return np.array(values, dtype=dtype)


CMATH_UNARY = ["acos", "asin", "asinh", "atan", "atanh", "cos", "exp", "sin", "sqrt", "tan", "log",
               "acosh", "log10", "tanh", "cosh", "sinh"]
# acosh, log10 and tanh give complex128 even for complex64 (Numba's typing).
WIDENING = {"acosh", "log10", "tanh"}

ARITHMETIC = """
@cuda.jit("void(C[::1], C[::1], C[:, ::1], F[:, ::1], boolean[:, ::1])")
def arithmetic_C(a, b, out, reals, truth):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = x + y
        out[1, i] = x - y
        out[2, i] = x * y
        out[3, i] = x - x
        out[4, i] = x ** y
        out[5, i] = -x
        out[6, i] = x.conjugate()
        out[7, i] = +x
        out[8, i] = complex(x.real, y.imag)
        out[9, i] = x * 3
        out[10, i] = x - 1.5
        z = x
        z *= y
        out[11, i] = z
        out[12, i] = pow(x, y)
        reals[0, i] = abs(x)
        reals[1, i] = x.real
        reals[2, i] = x.imag
        truth[0, i] = x == y
        truth[1, i] = x != y
        truth[2, i] = bool(x)
        truth[3, i] = not x
"""

DIVISION = """
@cuda.jit("void(C[::1], C[::1], C[::1])")
def divide_C(a, b, out):
    # Numba raises ZeroDivisionError for a zero divisor: the thread stops.
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] / b[i]
"""

CMATH = """
@cuda.jit("void(C[::1], C[::1], complex128[:, ::1], F[:, ::1], boolean[:, ::1])")
def cmath_C(z, w, out, reals, truth):
    i = cuda.grid(1)
    if i < z.size:
        v = z[i]
{rows}
        out[{n}, i] = cmath.log(v, w[i])
        out[{n1}, i] = cmath.rect(v.real, v.imag)
        reals[0, i] = cmath.phase(v)
        r, p = cmath.polar(v)
        reals[1, i] = r
        reals[2, i] = p
        truth[0, i] = cmath.isnan(v)
        truth[1, i] = cmath.isinf(v)
        truth[2, i] = cmath.isfinite(v)
"""


def module_source():
    rows = "\n".join(f"        out[{k}, i] = cmath.{name}(v)" for k, name in enumerate(CMATH_UNARY))
    cmath_kernel = CMATH.replace("{rows}", rows).replace("{n}", str(len(CMATH_UNARY)))
    cmath_kernel = cmath_kernel.replace("{n1}", str(len(CMATH_UNARY) + 1))
    parts = ["import cmath", "from numba import cuda"]
    for c in COMPLEX:
        for template in (ARITHMETIC, DIVISION, cmath_kernel):
            parts.append(template.replace("C[", c + "[").replace("F[", PART[c] + "[").replace("_C(", f"_{c}("))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return kiln_cpu.compile_source(module_source(), tmp_path_factory.mktemp("complex"))


def launch(kernel, count, *arguments):
    kernel[max(1, (count + 63) // 64), 64](*arguments)


def same_float(a, b):
    if math.isnan(b):
        return math.isnan(a)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def close(got, want, eps, k):
    """Each part within k * eps * |want|; infinities and NaNs exactly. (The
    sign of a zero part is checked at the special points below.)"""
    scale = abs(want) if math.isfinite(abs(want)) else 0.0
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        if not math.isfinite(w):
            if not same_float(g, w):
                return False
        elif not abs(g - w) <= k * eps * scale:
            return False
    return True


def check(actual, expected, what, operands, eps, k):
    """As close(); k may be a list, one factor per result."""
    factors = k if isinstance(k, list) else [k] * len(expected)
    bad = [
        f"{what} with {ops}: got {g!r}, expected {w!r} (within {f:.3g} eps)"
        for g, w, ops, f in zip(actual, expected, operands, factors)
        if w is not None and not close(complex(g), complex(w), eps, f)
    ]
    assert not bad, f"{len(bad)} wrong results, first ones:\n" + "\n".join(bad[:10])


def check_exact(actual, expected, what, operands):
    bad = [
        f"{what} with {ops}: got {g!r}, expected {w!r}"
        for g, w, ops in zip(actual, expected, operands)
        if not (same_float(complex(g).real, complex(w).real) and same_float(complex(g).imag, complex(w).imag))
    ]
    assert not bad, f"{len(bad)} wrong results, first ones:\n" + "\n".join(bad[:10])


def rounded(value, dtype):
    return complex(np.array(value, dtype=dtype))


def python(function, *args):
    try:
        return function(*args)
    except (ValueError, OverflowError, ZeroDivisionError):
        return None


@pytest.fixture(scope="module")
def arithmetic(kernels):
    results = {}
    for dtype in COMPLEX:
        values = grid(dtype, [0.0, -0.0, 0.5, -1.0, 2.0, -3.0, 1e-8, 10.0, INF, NAN])
        pairs = list(itertools.product(values, repeat=2))
        a = np.array([p[0] for p in pairs], dtype=dtype)
        b = np.array([p[1] for p in pairs], dtype=dtype)
        out = np.zeros((13, a.size), dtype=dtype)
        reals = np.zeros((3, a.size), dtype=PART[dtype])
        truth = np.zeros((4, a.size), dtype=np.bool_)
        launch(getattr(kernels, f"arithmetic_{dtype}"), a.size, a, b, out, reals, truth)
        results[dtype] = (a, b, out, reals, truth)
    return results


@pytest.mark.parametrize("dtype", COMPLEX)
def test_exact_arithmetic(arithmetic, dtype):
    a, b, out, reals, truth = arithmetic[dtype]
    ops = [(dtype, complex(x), complex(y)) for x, y in zip(a, b)]
    xs, ys = [complex(x) for x in a], [complex(y) for y in b]
    with np.errstate(all="ignore"):
        check_exact(out[0], [rounded(x + y, dtype) for x, y in zip(a, b)], "x + y", ops)
        check_exact(out[1], [rounded(x - y, dtype) for x, y in zip(a, b)], "x - y", ops)
        check_exact(out[5], [complex(-x.real, -x.imag) for x in xs], "-x", ops)
        check_exact(out[6], [complex(x.real, -x.imag) for x in xs], "x.conjugate()", ops)
        check_exact(out[7], xs, "+x", ops)
        check_exact(out[8], [complex(x.real, y.imag) for x, y in zip(xs, ys)], "complex(x.real, y.imag)", ops)
        # complex64 * int64 is complex128 arithmetic, stored back into complex64.
        check_exact(out[10], [rounded(complex(x.real - 1.5, x.imag), dtype) for x in xs], "x - 1.5", ops)
    part = PART[dtype]
    check_exact(reals[1], [x.real for x in xs], "x.real", ops)
    check_exact(reals[2], [x.imag for x in xs], "x.imag", ops)
    expected_abs = [float(np.array(math.hypot(x.real, x.imag), dtype=part)) for x in xs]
    bound = {"float32": 3, "float64": 2}[part] + 1  # CUDA hypot, plus rounding the reference
    got_abs = reals[0].tolist()
    bad = []
    for g, w, o in zip(got_abs, expected_abs, ops):
        if math.isinf(w) or math.isnan(w) or w == 0:
            if not same_float(g, w):
                bad.append((o, g, w))
        elif abs(g - w) > bound * np.spacing(np.array(w, dtype=part)):
            bad.append((o, g, w))
    assert not bad, f"abs(x) (operands, got, expected): {bad[:10]}"


@pytest.mark.parametrize("dtype", COMPLEX)
def test_comparisons_and_truth(arithmetic, dtype):
    a, b, _, _, truth = arithmetic[dtype]
    xs, ys = [complex(x) for x in a], [complex(y) for y in b]
    for row, (text, op) in enumerate([("x == y", lambda x, y: x == y), ("x != y", lambda x, y: x != y),
                                       ("bool(x)", lambda x, y: bool(x)), ("not x", lambda x, y: not x)]):
        bad = [(x, y) for x, y, got in zip(xs, ys, truth[row].tolist()) if got != op(x, y)]
        assert not bad, f"{text} in {dtype} is wrong for {bad[:10]}"


def finite_operands(a, b):
    return [bool(np.isfinite(x) and np.isfinite(y)) for x, y in zip(a, b)]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_products_quotients_and_powers(arithmetic, dtype):
    a, b, out, _, _ = arithmetic[dtype]
    eps = float(np.finfo(PART[dtype]).eps)
    keep = finite_operands(a, b)
    xs = [complex(x) for x, k in zip(a, keep) if k]
    ys = [complex(y) for y, k in zip(b, keep) if k]
    ops = [(dtype, x, y) for x, y in zip(xs, ys)]

    def rows(row):
        return [v for v, k in zip(out[row].tolist(), keep) if k]

    check(rows(2), [x * y for x, y in zip(xs, ys)], "x * y", ops, eps, 8)
    check(rows(11), [x * y for x, y in zip(xs, ys)], "x *= y", ops, eps, 8)
    check(rows(9), [x * 3 for x in xs], "x * 3", ops, eps, 8)
    # Numba's cpow (numba-cuda mathimpl.cpow_implement) is CPython's
    # _Py_c_pow in the operands' precision, except at a zero base (0 ** y is
    # compared where both agree). exp(y log x) amplifies the rounding of
    # y log x, so the bound grows with |y log x|.
    powers = [None if x.real == 0 and y.real == 0 and y != 0 else python(lambda: x**y) for x, y in zip(xs, ys)]
    powers = [None if p is None else rounded(p, dtype) for p in powers]
    conditioning = [16 * (1 + abs(y) * abs(cmath.log(x))) if x else 16 for x, y in zip(xs, ys)]
    check(rows(4), powers, "x ** y", ops, eps, conditioning)
    check(rows(12), powers, "pow(x, y)", ops, eps, conditioning)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_division(kernels, dtype):
    values = grid(dtype, [0.0, -0.0, 0.5, -1.0, 2.0, -3.0, 1e-8, 10.0, INF, NAN])
    pairs = list(itertools.product(values, repeat=2))
    a = np.array([p[0] for p in pairs], dtype=dtype)
    b = np.array([p[1] for p in pairs], dtype=dtype)
    sentinel = complex(12345, -12345)
    out = np.full(a.size, sentinel, dtype=dtype)
    launch(getattr(kernels, f"divide_{dtype}"), a.size, a, b, out)
    stopped = [complex(x) for x, y, got in zip(a, b, out) if y == 0 and got != sentinel]
    assert not stopped, f"x / 0 must stop the thread (Numba raises ZeroDivisionError); it stored for x in {stopped[:5]}"
    eps = float(np.finfo(PART[dtype]).eps)
    keep = [bool(np.isfinite(x) and np.isfinite(y) and y != 0) for x, y in zip(a, b)]
    xs = [complex(x) for x, k in zip(a, keep) if k]
    ys = [complex(y) for y, k in zip(b, keep) if k]
    got = [g for g, k in zip(out.tolist(), keep) if k]
    check(got, [x / y for x, y in zip(xs, ys)], "x / y", [(dtype, x, y) for x, y in zip(xs, ys)], eps, 8)


def test_division_follows_cpython_smith_algorithm(kernels):
    # Results that depend on the branch Smith's algorithm takes: huge and
    # tiny parts, where the textbook formula overflows or underflows.
    a = np.array([1 + 1j, 1e300 + 1e300j, 1e-300 + 1e-300j, 3 + 4j, 1 + 0j], dtype=np.complex128)
    b = np.array([1e300 + 1e300j, 1e300 + 1e-300j, 1e-300 + 1e-300j, 0 + 2j, 1e-310 + 1e-310j])
    out = np.zeros(a.size, dtype=np.complex128)
    launch(kernels.divide_complex128, a.size, a, b, out)
    expected = [complex(x) / complex(y) for x, y in zip(a, b)]
    check(out.tolist(), expected, "x / y", list(zip(a.tolist(), b.tolist())), 2.2e-16, 8)


@pytest.fixture(scope="module")
def cmath_results(kernels):
    results = {}
    for dtype in COMPLEX:
        z = grid(dtype)
        w = np.array([2 + 0j, 10 + 0j, 0.5 - 1j, -3 + 2j] * (z.size // 4 + 1), dtype=dtype)[: z.size]
        out = np.zeros((len(CMATH_UNARY) + 2, z.size), dtype=np.complex128)
        reals = np.zeros((3, z.size), dtype=PART[dtype])
        truth = np.zeros((3, z.size), dtype=np.bool_)
        launch(getattr(kernels, f"cmath_{dtype}"), z.size, z, w, out, reals, truth)
        results[dtype] = (z, w, out, reals, truth)
    return results


def numba_log(z, base=None):
    """numba-cuda's cmath.log: log(hypot) + i atan2, without CPython's care
    near |z| = 1 (where it loses the real part's relative accuracy)."""
    if base is not None:
        return numba_log(z) / numba_log(base)
    return complex(math.log(math.hypot(z.real, z.imag)), math.atan2(z.imag, z.real))


def numba_log10(z):
    w = numba_log(z)
    return complex(w.real / math.log(10), w.imag / math.log(10))


REFERENCES = {"log": numba_log, "log10": numba_log10}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", CMATH_UNARY)
def test_cmath_functions(cmath_results, name, dtype):
    z, _, out, _, _ = cmath_results[dtype]
    result_type = "complex128" if name in WIDENING else dtype
    eps = float(np.finfo(PART[dtype]).eps)
    function = REFERENCES.get(name, getattr(cmath, name))
    expected = []
    for v in z.tolist():
        value = python(function, v)
        expected.append(None if value is None else rounded(value, result_type))
    check(out[CMATH_UNARY.index(name)].tolist(), expected, f"cmath.{name}", [(dtype, v) for v in z.tolist()],
          eps, 16)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_cmath_log_base_rect_phase_polar(cmath_results, dtype):
    z, w, out, reals, truth = cmath_results[dtype]
    eps = float(np.finfo(PART[dtype]).eps)
    zs, ws = z.tolist(), w.tolist()
    n = len(CMATH_UNARY)
    logs = [python(numba_log, v, b) for v, b in zip(zs, ws)]
    check(out[n].tolist(), logs, "cmath.log(z, base)", list(zip(zs, ws)), eps, 16)
    check(out[n + 1].tolist(), [cmath.rect(v.real, v.imag) for v in zs], "cmath.rect(z.real, z.imag)",
          zs, eps, 16)
    check(reals[0].tolist(), [cmath.phase(v) for v in zs], "cmath.phase", zs, eps, 16)
    check(reals[1].tolist(), [cmath.polar(v)[0] for v in zs], "cmath.polar(z)[0]", zs, eps, 16)
    check(reals[2].tolist(), [cmath.polar(v)[1] for v in zs], "cmath.polar(z)[1]", zs, eps, 16)


def test_cmath_classification(kernels):
    z = np.array([0j, complex(INF, 0), complex(0, -INF), complex(NAN, 1), complex(1, NAN), 1 + 2j,
                  complex(INF, NAN)])
    w = np.full_like(z, 2)
    out = np.zeros((len(CMATH_UNARY) + 2, z.size), dtype=np.complex128)
    reals = np.zeros((3, z.size))
    truth = np.zeros((3, z.size), dtype=np.bool_)
    launch(kernels.cmath_complex128, z.size, z, w, out, reals, truth)
    for row, function in enumerate([cmath.isnan, cmath.isinf, cmath.isfinite]):
        wrong = [v for v, got in zip(z.tolist(), truth[row].tolist()) if got != function(v)]
        assert not wrong, f"cmath.{function.__name__} is wrong for {wrong}"


# C99 Annex G values at special points, which CPython's cmath and Numba's
# ports of it give too (where CPython raises, Annex G's value is listed).
SPECIAL_POINTS = [
    ("exp", complex(INF, 0.0), complex(INF, 0.0)),
    ("exp", complex(-INF, 1.0), complex(0.0, 0.0)),
    ("exp", complex(NAN, 0.0), complex(NAN, 0.0)),
    ("log", complex(0.0, 0.0), complex(-INF, 0.0)),
    ("log", complex(-0.0, 0.0), complex(-INF, math.pi)),
    ("log", complex(-1.0, -0.0), complex(0.0, -math.pi)),
    ("sqrt", complex(0.0, -0.0), complex(0.0, -0.0)),
    ("sqrt", complex(-4.0, 0.0), complex(0.0, 2.0)),
    ("sqrt", complex(-4.0, -0.0), complex(0.0, -2.0)),
    ("sqrt", complex(1.0, INF), complex(INF, INF)),
    ("sqrt", complex(-INF, 1.0), complex(0.0, INF)),
    ("sqrt", complex(INF, -1.0), complex(INF, -0.0)),
    ("cosh", complex(INF, 0.0), complex(INF, 0.0)),
    ("sinh", complex(-INF, 0.0), complex(-INF, 0.0)),
    ("tanh", complex(INF, 1.0), complex(1.0, 0.0)),
    ("tanh", complex(-INF, -1.0), complex(-1.0, -0.0)),
    ("atanh", complex(1.0, 0.0), complex(INF, 0.0)),
    ("atanh", complex(-1.0, -0.0), complex(-INF, -0.0)),
    ("asinh", complex(-0.0, 0.0), complex(-0.0, 0.0)),
    ("acos", complex(1.0, -0.0), complex(0.0, 0.0)),
]


@pytest.mark.parametrize("name,argument,expected", SPECIAL_POINTS)
def test_cmath_special_points(kernels, name, argument, expected):
    z = np.array([argument], dtype=np.complex128)
    out = np.zeros((len(CMATH_UNARY) + 2, 1), dtype=np.complex128)
    reals = np.zeros((3, 1))
    truth = np.zeros((3, 1), dtype=np.bool_)
    launch(kernels.cmath_complex128, 1, z, np.full_like(z, 2), out, reals, truth)
    got = complex(out[CMATH_UNARY.index(name), 0])
    ok = same_float(got.real, expected.real) and same_float(got.imag, expected.imag)
    assert ok, f"cmath.{name}({argument!r}): got {got!r}, expected {expected!r}"


# Numba's compiled semantics, for the precision of each cmath function: its
# CPU target runs the same ports of CPython's algorithms, typed by the same
# rules, as its CUDA target. On complex64 they compute in float32 wherever no
# float64 constant widens them, so exp(89 + 1.5j) overflows to inf + infj
# where a float64 computation would give a finite real part.
NUMBA_CMATH = """
import cmath
import numba

@numba.njit
def all_cmath(z, w, out):
    for i in range(z.size):
        v = z[i]
{rows}
        out[{n}, i] = cmath.log(v, w[i])
        out[{n1}, i] = cmath.rect(v.real, v.imag)
        out[{n2}, i] = cmath.phase(v)
        out[{n3}, i] = cmath.polar(v)[0]
        out[{n4}, i] = cmath.polar(v)[1]
"""

# Parts where float32 and float64 computations part ways: near float32's
# overflow (exp(89) and cosh(89) do not fit; 1e20 squared does not), beside
# ordinary and tiny ones.
OVERFLOW_PARTS = [0.5, -1.0, 2.0, 89.0, -89.0, 45.0, 1e20, -1e20, 3e38, 1e-30, 0.9999]


def numba_cmath_results(z, w):
    n = len(CMATH_UNARY)
    rows = "\n".join(f"        out[{k}, i] = cmath.{name}(v)" for k, name in enumerate(CMATH_UNARY))
    source = NUMBA_CMATH.replace("{rows}", rows)
    for k in range(5):
        source = source.replace(f"{{n{k}}}" if k else "{n}", str(n + k))
    namespace = {}
    exec(compile(source, "<numba cmath>", "exec"), namespace)
    out = np.zeros((n + 5, z.size), dtype=np.complex128)
    namespace["all_cmath"](z, w, out)
    return out


@pytest.mark.parametrize("dtype", COMPLEX)
def test_cmath_precision_follows_numba_compiled_semantics(kernels, dtype):
    z = grid(dtype, OVERFLOW_PARTS)
    w = np.array([2 + 0j, 10 + 0j, 0.5 - 1j, -3 + 2j] * (z.size // 4 + 1), dtype=dtype)[: z.size]
    n = len(CMATH_UNARY)
    out = np.zeros((n + 2, z.size), dtype=np.complex128)
    reals = np.zeros((3, z.size), dtype=PART[dtype])
    truth = np.zeros((3, z.size), dtype=np.bool_)
    launch(getattr(kernels, f"cmath_{dtype}"), z.size, z, w, out, reals, truth)
    expected = numba_cmath_results(z, w)
    eps = float(np.finfo(PART[dtype]).eps)
    # Numba's sqrt rescales only the real part of an argument it scaled down
    # (its port of NumPy's csqrt); Kiln rescales both, as CPython.
    scaled = np.maximum(abs(z.real), abs(z.imag)) >= np.finfo(PART[dtype]).max / (1 + math.sqrt(2))
    operands = [(dtype, v) for v in z.tolist()]
    for row, name in enumerate(CMATH_UNARY + ["log(z, base)", "rect(z.real, z.imag)"]):
        want = [None if name == "sqrt" and s else v for v, s in zip(expected[row].tolist(), scaled)]
        check(out[row].tolist(), want, f"cmath.{name}", operands, eps, 16)
    for row, name in enumerate(["phase", "polar(z)[0]", "polar(z)[1]"]):
        check(reals[row].tolist(), expected[n + 2 + row].real.tolist(), f"cmath.{name}", operands, eps, 16)
