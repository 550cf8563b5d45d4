"""Float semantics of compiled kernels on the CPU engine, in float32 and float64.

Floor division and modulo follow CPython's float_divmod as numba-cuda
lowers it (real_divmod_func_body), computed in the operands' type, with
NumPy's answers for a zero divisor (x / 0 and NaN); `**` with an integer
exponent multiplies by squaring in the float's type (Numba's int_power,
math.pow beyond 2**16); round() is half to even and round(x, n) is Numba's
round_to_impl (CPython's fallback double_round, in float64); comparisons
with NaN are false except `!=`, and NaN is true. Exact operations are
compared bit for bit (the sign of zero included), pow within the CUDA
bound (see test_math_functions.py).
"""

import itertools
import math

import numpy as np
import pytest

import kiln_cpu

FLOATS = ["float32", "float64"]

SPECIAL = [0.0, -0.0, float("inf"), float("-inf"), float("nan")]
ORDINARY = [1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.75, -3.75, 7.0, -7.0, 0.1, -0.3, 1e-30, 123456.789, -1e30]


def values(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    big = np.finfo(dtype).max
    return np.array(SPECIAL + ORDINARY + [tiny, -tiny, big, -big], dtype=dtype)


def same(actual, expected):
    """Bitwise agreement up to NaN payloads: -0.0 differs from 0.0."""
    if np.isnan(expected):
        return bool(np.isnan(actual))
    return actual == expected and np.signbit(actual) == np.signbit(expected)


def ulp_distance(actual, expected, dtype):
    bits = np.dtype({"float32": "int32", "float64": "int64"}[np.dtype(dtype).name])

    def ordered(v):
        i = int(np.array(v, dtype=dtype).view(bits))
        return i if i >= 0 else -(i & ((1 << (8 * bits.itemsize - 1)) - 1))

    return abs(ordered(actual) - ordered(expected))


def check_exact(actual, expected, what, operands):
    bad = [
        f"{what} with {ops}: got {a!r}, expected {e!r}"
        for a, e, ops in zip(actual.tolist(), expected, operands)
        if not same(np.array(a, dtype=actual.dtype), np.array(e, dtype=actual.dtype))
    ]
    assert not bad, f"{len(bad)} wrong results, first ones:\n" + "\n".join(bad[:10])


def check_close(actual, expected, what, operands, ulps):
    dtype = actual.dtype
    bad = []
    for a, e, ops in zip(actual.tolist(), expected, operands):
        a = np.array(a, dtype=dtype)
        e = np.array(e, dtype=dtype)
        exactly = np.isnan(e) or np.isinf(e) or e == 0
        if (exactly and not same(a, e)) or (not exactly and ulp_distance(a, e, dtype) > ulps):
            bad.append(f"{what} with {ops}: got {a!r}, expected {e!r} (within {ulps} ulp)")
    assert not bad, f"{len(bad)} wrong results, first ones:\n" + "\n".join(bad[:10])


HEADER = """
import math
from numba import cuda, float32, float64, int32, int64
"""

KERNELS = """
@cuda.jit("void(T[::1], T[::1], T[:, ::1], boolean[:, ::1])")
def binary_T(a, b, out, truth):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = x // y
        out[1, i] = x % y
        q, r = divmod(x, y)
        out[2, i] = q
        out[3, i] = r
        out[4, i] = x ** y
        out[5, i] = x + y
        out[6, i] = x - y
        out[7, i] = x * y
        out[8, i] = x / y
        out[9, i] = -x
        out[10, i] = abs(x)
        out[11, i] = min(x, y)
        out[12, i] = max(x, y)
        out[13, i] = math.pow(x, y)
        z = x
        z //= y
        out[14, i] = z
        w = x
        w %= y
        out[15, i] = w
        truth[0, i] = x < y
        truth[1, i] = x <= y
        truth[2, i] = x > y
        truth[3, i] = x >= y
        truth[4, i] = x == y
        truth[5, i] = x != y
        truth[6, i] = bool(x)
        truth[7, i] = not x
        if x:
            truth[8, i] = True
        else:
            truth[8, i] = False
        truth[9, i] = x < y < x + 1
        truth[10, i] = x == x


@cuda.jit("void(T[::1], int64[::1], int32[::1], T[:, ::1])")
def int_powers_T(a, n, m, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        out[0, i] = x ** n[i]
        out[1, i] = x ** m[i]
        out[2, i] = x ** 2
        out[3, i] = x ** 3
        out[4, i] = x ** -1
        out[5, i] = x ** -3
        out[6, i] = x ** 0
        out[7, i] = pow(x, n[i])
        out[8, i] = math.pow(x, m[i])
        out[9, i] = math.pow(x, n[i])


@cuda.jit("void(T[::1], int64[::1], int64[::1], T[::1])")
def rounding_T(x, n, whole, out):
    i = cuda.grid(1)
    if i < x.size:
        whole[i] = round(x[i])
        out[i] = round(x[i], n[i])
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    source = HEADER + "".join(KERNELS.replace("T[", t + "[").replace("_T(", f"_{t}(") for t in FLOATS)
    return kiln_cpu.compile_source(source, tmp_path_factory.mktemp("floats"))


def launch(kernel, count, *arguments):
    kernel[max(1, (count + 63) // 64), 64](*arguments)


# --- References ------------------------------------------------------------------


def numba_divmod(x, y):
    """numba-cuda's float floor division and modulo, in x's type."""
    t = type(x)
    with np.errstate(all="ignore"):
        if y == 0:
            return x / y, np.fmod(x, y)
        mod = np.fmod(x, y)
        div = (x - mod) / y
        if mod != 0 or np.isnan(mod):
            if (y < 0) != (mod < 0):
                mod = mod + y
                div = div - t(1)
        else:
            mod = t(-0.0) if y < 0 else t(0.0)
        if div != 0 and not np.isnan(div):
            floordiv = np.floor(div)
            if div - floordiv > t(0.5):
                floordiv = floordiv + t(1)
        else:
            div = div * div
            floordiv = div * x / y
        return floordiv, mod


def numba_int_power(x, n):
    """Numba's int_power for a float base, in x's type: libdevice_powi's
    squaring up to 2**16, math.pow in float64 beyond."""
    if abs(n) > 0x10000:
        with np.errstate(all="ignore"):
            return type(x)(np.float64(x) ** np.float64(n))
    return libdevice_powi(x, n)


def libdevice_powi(x, n):
    """libdevice's powi and powif, which Numba's CUDA target calls for
    math.pow(x, n) with an int32 n: by squaring in x's type, whatever n,
    then one reciprocal for a negative n (so a square that overflows gives
    0 where pow would give a subnormal)."""
    t = type(x)
    with np.errstate(all="ignore"):
        result, square, exponent = t(1), x, abs(n)
        while exponent:
            if exponent & 1:
                result = t(result * square)
            exponent >>= 1
            square = t(square * square)
        return t(t(1) / result) if n < 0 else result


def numba_round_digits(x, n):
    """numba-cuda's round_to_impl, computed in float64 whatever x's type.

    One difference: numba-cuda rounds the scaled value with round(), which
    is __nv_llrint and saturates beyond 2**63 (so that its round(1e20, 0) is
    9.223372036854776e18); Kiln, and this reference, round it exactly."""
    x = float(x)
    if math.isinf(x) or math.isnan(x):
        return x
    with np.errstate(all="ignore"):
        if n >= 0:
            pow1 = float(numba_int_power(np.float64(10.0), n - 22 if n > 22 else n))
            pow2 = 1e22 if n > 22 else 1.0
            y = float(np.float64(x) * pow1 * pow2)
            if math.isinf(y):
                return x
            return float(np.float64(np.rint(y)) / pow2 / pow1)
        pow1 = float(numba_int_power(np.float64(10.0), -n))
        return float(np.rint(np.float64(x) / pow1) * pow1)


def pairs(dtype):
    v = values(dtype)
    grid = list(itertools.product(v, v))
    return np.array([p[0] for p in grid], dtype=dtype), np.array([p[1] for p in grid], dtype=dtype)


def run_binary(kernels, dtype):
    a, b = pairs(dtype)
    out = np.zeros((16, a.size), dtype=dtype)
    truth = np.zeros((11, a.size), dtype=np.bool_)
    launch(getattr(kernels, f"binary_{dtype}"), a.size, a, b, out, truth)
    operands = [(dtype, x, y) for x, y in zip(a.tolist(), b.tolist())]
    return a, b, out, truth, operands


# --- Tests -------------------------------------------------------------------------


def test_floor_division_reference_is_cpythons():
    # The reference above is CPython's float_divmod wherever CPython answers.
    for x, y in itertools.product(values("float64").tolist(), repeat=2):
        if y == 0:
            continue
        q, r = numba_divmod(np.float64(x), np.float64(y))
        assert same(q, np.float64(x // y)) and same(r, np.float64(x % y)), (x, y, q, r)


@pytest.mark.parametrize("dtype", FLOATS)
def test_floor_division_and_modulo(kernels, dtype):
    a, b, out, _, operands = run_binary(kernels, dtype)
    expected = [numba_divmod(x, y) for x, y in zip(a, b)]
    check_exact(out[0], [e[0] for e in expected], "x // y", operands)
    check_exact(out[1], [e[1] for e in expected], "x % y", operands)
    check_exact(out[2], [e[0] for e in expected], "divmod(x, y)[0]", operands)
    check_exact(out[3], [e[1] for e in expected], "divmod(x, y)[1]", operands)
    check_exact(out[14], [e[0] for e in expected], "x //= y", operands)
    check_exact(out[15], [e[1] for e in expected], "x %= y", operands)


@pytest.mark.parametrize("dtype", FLOATS)
def test_arithmetic_is_ieee(kernels, dtype):
    a, b, out, _, operands = run_binary(kernels, dtype)
    with np.errstate(all="ignore"):
        check_exact(out[5], a + b, "x + y", operands)
        check_exact(out[6], a - b, "x - y", operands)
        check_exact(out[7], a * b, "x * y", operands)
        check_exact(out[8], a / b, "x / y", operands)
    check_exact(out[9], -a, "-x", operands)
    check_exact(out[10], np.abs(a), "abs(x)", operands)
    # numba-cuda's min and max of two floats are libdevice's fmin and fmax
    # (PTX's min and max): a NaN operand gives the other, -0.0 is below 0.0.
    def minimum_number(x, y):
        if np.isnan(x) or np.isnan(y):
            return y if np.isnan(x) else x
        return x if x < y or (x == y and np.signbit(x)) else y

    def maximum_number(x, y):
        if np.isnan(x) or np.isnan(y):
            return y if np.isnan(x) else x
        return x if x > y or (x == y and not np.signbit(x)) else y

    check_exact(out[11], [minimum_number(x, y) for x, y in zip(a, b)], "min(x, y)", operands)
    check_exact(out[12], [maximum_number(x, y) for x, y in zip(a, b)], "max(x, y)", operands)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_powers(kernels, dtype):
    a, b, out, _, operands = run_binary(kernels, dtype)
    with np.errstate(all="ignore"):
        expected = np.power(a, b)
    bound = {"float32": 4 + 1, "float64": 2 + 1}[dtype]  # CUDA powf/pow, plus the reference's
    check_close(out[4], expected, "x ** y", operands, bound)
    check_close(out[13], expected, "math.pow(x, y)", operands, bound)


@pytest.mark.parametrize("dtype", FLOATS)
def test_comparisons_and_truth(kernels, dtype):
    a, b, _, truth, operands = run_binary(kernels, dtype)
    xs, ys = a.tolist(), b.tolist()
    for row, (text, op) in enumerate(
        [
            ("x < y", lambda x, y: x < y),
            ("x <= y", lambda x, y: x <= y),
            ("x > y", lambda x, y: x > y),
            ("x >= y", lambda x, y: x >= y),
            ("x == y", lambda x, y: x == y),
            ("x != y", lambda x, y: x != y),
            ("bool(x)", lambda x, y: bool(x)),
            ("not x", lambda x, y: not x),
            ("if x", lambda x, y: bool(x)),
            ("x < y < x + 1", lambda x, y: x < y < float(np.array(x + 1, dtype=dtype))),
            ("x == x", lambda x, y: x == x),
        ]
    ):
        expected = [op(x, y) for x, y in zip(xs, ys)]
        got = truth[row].tolist()
        bad = [f"{text} with {o}: got {g}, expected {e}" for g, e, o in zip(got, expected, operands) if g != e]
        assert not bad, "\n".join(bad[:10])


INT_EXPONENTS = [0, 1, 2, 3, 4, 5, 7, 10, 31, 64, 100, -1, -2, -3, -7, -64, 65536, 65537, 100001, -100001, -65537]


@pytest.mark.parametrize("dtype", FLOATS)
def test_integer_exponents(kernels, dtype):
    base = [0.0, -0.0, 1.0, -1.0, 1.0001, -1.0001, 0.9999, 2.0, -2.0, 0.5, 3.3, -3.3, 1e-3, float("inf"),
            float("-inf"), float("nan"), 10.0]
    grid = list(itertools.product(base, INT_EXPONENTS))
    x = np.array([g[0] for g in grid], dtype=dtype)
    n = np.array([g[1] for g in grid], dtype=np.int64)
    m = n.astype(np.int32)
    out = np.zeros((10, x.size), dtype=dtype)
    launch(getattr(kernels, f"int_powers_{dtype}"), x.size, x, n, m, out)
    t = np.dtype(dtype).type
    operands = [(dtype, float(b), int(e)) for b, e in zip(x, n)]
    expected = [numba_int_power(t(b), int(e)) for b, e in zip(x, n)]
    # By squaring in the float's type, as Numba: exact, not pow()'s rounding.
    check_exact(out[0], expected, "x ** n (int64 n)", operands)
    check_exact(out[1], expected, "x ** n (int32 n)", operands)
    check_exact(out[7], expected, "pow(x, n)", operands)
    # math.pow with an int32 exponent is libdevice's powi(f), as Numba's
    # CUDA target calls it; with an int64 one, pow of two floats.
    check_exact(out[8], [libdevice_powi(t(b), int(e)) for b, e in zip(x, n)], "math.pow(x, int32 n)", operands)
    with np.errstate(all="ignore"):
        as_floats = [t(np.power(t(b), t(e))) for b, e in zip(x, n)]
    check_close(out[9], as_floats, "math.pow(x, int64 n)", operands, 2)
    single = [(dtype, float(b)) for b in x]
    for row, exponent in [(2, 2), (3, 3), (4, -1), (5, -3), (6, 0)]:
        check_exact(out[row], [numba_int_power(t(b), exponent) for b in x], f"x ** {exponent}", single)


ROUNDING_INPUTS = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49999997, 1.25, 1.35, 2.675, -2.675,
                   0.125, 0.375, 1234.5678, -1234.5678, 1e15 + 0.5, 5e-324, 1e300, 1.7976931348623157e308,
                   float("inf"), float("-inf"), float("nan"), 123456789.987654321, 0.285, 1.005]
DIGITS = [0, 1, 2, 3, -1, -2, -3, 5, 10, 23, 30, 300, -20]


@pytest.mark.parametrize("dtype", FLOATS)
def test_round(kernels, dtype):
    grid = list(itertools.product(ROUNDING_INPUTS, DIGITS))
    with np.errstate(over="ignore"):  # 1e300 is infinite in float32
        x = np.array([g[0] for g in grid], dtype=dtype)
    n = np.array([g[1] for g in grid], dtype=np.int64)
    whole = np.zeros(x.size, dtype=np.int64)
    out = np.zeros(x.size, dtype=dtype)
    launch(getattr(kernels, f"rounding_{dtype}"), x.size, x, n, whole, out)

    def to_int64(v):
        # round() to int64 saturates and sends NaN to 0, as llrint on a GPU.
        if math.isnan(v):
            return 0
        if math.isinf(v) or abs(round(v)) >= 2**63:
            return 2**63 - 1 if v > 0 else -(2**63)
        return round(v)

    expected_whole = [to_int64(float(v)) for v in x]
    got = whole.tolist()
    bad = [f"round({dtype} {v!r}): got {g}, expected {e}" for v, g, e in zip(x.tolist(), got, expected_whole) if g != e]
    assert not bad, "\n".join(bad[:10])
    expected = [np.array(numba_round_digits(v, int(d)), dtype=dtype) for v, d in zip(x, n)]
    check_exact(out, expected, "round(x, n)", [(dtype, float(v), int(d)) for v, d in zip(x, n)])


def test_round_digits_reference_agrees_with_python():
    # Numba's algorithm is CPython's fallback, which differs from CPython's
    # correctly rounded one where scaling rounds (-2.675 * 100 is -267.5);
    # on binary fractions they agree.
    assert numba_round_digits(-2.675, 2) == -2.68 and round(-2.675, 2) == -2.67
    for v, d in itertools.product([0.5, 1.5, 2.5, 1.25, 0.125, -0.375, 1234.5, 1e22], range(-3, 6)):
        assert numba_round_digits(v, d) == round(v, d), (v, d)
