"""Integer semantics of compiled kernels on the CPU engine, for every width.

Each operator runs on every pair of a set of edge values (zero, ±1, small
negatives, the type's minimum and maximum) of every integer type, and the
results are compared with Python integers computed by Numba's rules: NBEP 1
typing (arithmetic in 64 bits, int64 unless both operands are unsigned),
Python's floor division and modulo with 0 for division by zero and for
INT64_MIN // -1 (numba-cuda's int_divmod_signed), integer powers by squaring
with Numba's int_power cut-off and negative-exponent rules, shifts that give
0 (or -1) beyond the width, negation and inversion done in the operand's
width before widening (int_negate_impl), comparisons between int64 and
uint64 in float64, min/max in the unified type, and float-to-integer
conversions that truncate toward zero, saturate and send NaN to 0.
"""

import itertools

import numpy as np
import pytest

import kiln_cpu

SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
INTEGERS = SIGNED + UNSIGNED
MASK64 = (1 << 64) - 1


def info(dtype):
    return np.iinfo(np.dtype(dtype))


def result_dtype(dtype):
    """NBEP 1: arithmetic on two operands of `dtype` gives 64 bits."""
    return "int64" if np.dtype(dtype).kind == "i" else "uint64"


def wrap(value, dtype):
    """`value` reduced modulo 2**bits into the range of `dtype`."""
    bits = np.dtype(dtype).itemsize * 8
    value &= (1 << bits) - 1
    if np.dtype(dtype).kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def saturate(real, dtype):
    """A float converted as Kiln and a GPU do: toward zero, clamped, NaN 0."""
    if np.isnan(real):
        return 0
    limits = info(dtype)
    if real >= limits.max:
        return int(limits.max)
    if real <= limits.min:
        return int(limits.min)
    return int(real)


def edge_values(dtype):
    limits = info(dtype)
    candidates = [0, 1, -1, 2, -2, 3, -3, 5, -7, 7, 10, -10, 63, 64, 65, 100, 127]
    candidates += [limits.min, limits.min + 1, limits.max, limits.max - 1]
    candidates += [limits.max // 2, limits.max // 2 + 1]
    return sorted({int(v) for v in candidates if limits.min <= v <= limits.max})


def pairs(dtype, right=None):
    values = edge_values(dtype)
    grid = list(itertools.product(values, right if right is not None else values))
    a = np.array([p[0] for p in grid], dtype=dtype)
    b = np.array([p[1] for p in grid], dtype=dtype)
    return a, b


def check(actual, expected, what, operands):
    """Asserts actual == expected elementwise, naming the failing operands."""
    actual = [v.item() if hasattr(v, "item") else v for v in actual]
    bad = [
        f"{what} with operands {ops}: got {got!r}, expected {want!r}"
        for got, want, ops in zip(actual, expected, operands)
        if not (got == want or (isinstance(want, float) and np.isnan(want) and np.isnan(got)))
    ]
    assert not bad, f"{len(bad)} wrong results, first ones:\n" + "\n".join(bad[:10])


# --- The kernels ------------------------------------------------------------

BINARY = """
@cuda.jit("void(T[::1], T[::1], R[:, ::1], T[:, ::1], boolean[:, ::1])")
def binary_T(a, b, wide, narrow, truth):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        wide[0, i] = x + y
        wide[1, i] = x - y
        wide[2, i] = x * y
        wide[3, i] = x // y
        wide[4, i] = x % y
        wide[5, i] = x ** y
        wide[6, i] = x << y
        wide[7, i] = x >> y
        wide[8, i] = x & y
        wide[9, i] = x | y
        wide[10, i] = x ^ y
        wide[11, i] = -x
        wide[12, i] = ~x
        wide[13, i] = +x
        q, r = divmod(x, y)
        wide[14, i] = q
        wide[15, i] = r
        narrow[0, i] = abs(x)
        narrow[1, i] = min(x, y)
        narrow[2, i] = max(x, y)
        narrow[3, i] = x + y
        narrow[4, i] = x * y
        t = x
        t //= y
        narrow[5, i] = t
        truth[0, i] = x < y
        truth[1, i] = x <= y
        truth[2, i] = x > y
        truth[3, i] = x >= y
        truth[4, i] = x == y
        truth[5, i] = x != y
        truth[6, i] = bool(x)
        truth[7, i] = not x


@cuda.jit("void(T[::1], int64[:, ::1])")
def literal_powers_T(a, out):
    # Constant exponents take Numba's static_power_impl path.
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        out[0, i] = x ** 0
        out[1, i] = x ** 1
        out[2, i] = x ** 2
        out[3, i] = x ** 3
        out[4, i] = x ** 7
        out[5, i] = x ** -1
        out[6, i] = x ** -2
        out[7, i] = x ** 64


@cuda.jit("void(float64[::1], float32[::1], T[:, ::1])")
def from_float_T(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = T(x[i])
        out[1, i] = x[i]
        out[2, i] = T(y[i])
        out[3, i] = np.T(y[i])


@cuda.jit("void(T[::1], float64[::1], float32[::1])")
def to_float_T(a, f64, f32):
    i = cuda.grid(1)
    if i < a.size:
        f64[i] = float(a[i])
        f32[i] = float32(a[i])


@cuda.jit("void(int64[::1], uint64[::1], T[:, ::1])")
def from_wide_T(a, u, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = T(a[i])
        out[1, i] = T(u[i])
        out[2, i] = a[i]
"""

MIXED = """
@cuda.jit("void(L[::1], Rt[::1], int64[:, ::1], U[:, ::1], boolean[:, ::1])")
def mixed_L_Rt(a, b, wide, minmax, truth):
    # Mixed signedness computes in int64 (both operands converted), shifts
    # in the left operand's signedness.
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        wide[0, i] = x + y
        wide[1, i] = x - y
        wide[2, i] = x * y
        wide[3, i] = x // y
        wide[4, i] = x % y
        wide[5, i] = x << y
        wide[6, i] = x >> y
        minmax[0, i] = min(x, y)
        minmax[1, i] = max(x, y)
        truth[0, i] = x < y
        truth[1, i] = x <= y
        truth[2, i] = x == y
        truth[3, i] = x != y
        truth[4, i] = x > y
        truth[5, i] = x >= y
"""

MIXED_PAIRS = [
    ("int64", "uint64"),
    ("uint64", "int64"),
    ("int8", "uint8"),
    ("uint8", "int8"),
    ("int32", "uint32"),
    ("uint64", "int8"),
    ("int64", "uint32"),
    ("uint16", "int16"),
]

BOOLEANS = """
@cuda.jit("void(boolean[::1], boolean[::1], int64[:, ::1], boolean[:, ::1])")
def booleans(p, q, ints, truth):
    i = cuda.grid(1)
    if i < p.size:
        x = p[i]
        y = q[i]
        ints[0, i] = x + y
        ints[1, i] = x - y
        ints[2, i] = x * y
        ints[3, i] = x // y
        ints[4, i] = x % y
        ints[5, i] = -x
        ints[6, i] = +x
        ints[7, i] = abs(x)
        ints[8, i] = x + 1
        ints[9, i] = x * 5 - y
        ints[10, i] = int(x)
        truth[0, i] = x & y
        truth[1, i] = x | y
        truth[2, i] = x ^ y
        truth[3, i] = ~x
        truth[4, i] = not x
        truth[5, i] = x < y
        truth[6, i] = x == y
        truth[7, i] = min(x, y)
        truth[8, i] = max(x, y)
"""


def module_source():
    parts = ["import numpy as np", "from numba import cuda, float32"]
    for dtype in INTEGERS:
        parts.append(
            BINARY.replace("R[", result_dtype(dtype) + "[")
            .replace("np.T(", f"np.{dtype}(")
            .replace("T(", dtype + "(")
            .replace("_T", "_" + dtype)
            .replace("T[", dtype + "[")
        )
    for left, right in MIXED_PAIRS:
        unified = str(np.promote_types(left, right))
        parts.append(
            MIXED.replace("L[", left + "[")
            .replace("Rt[", right + "[")
            .replace("U[", unified + "[")
            .replace("_L_Rt", f"_{left}_{right}")
        )
    parts.append(BOOLEANS)
    imports = ", ".join(INTEGERS)
    parts[1] += ", " + imports
    return "\n".join(parts)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return kiln_cpu.compile_source(module_source(), tmp_path_factory.mktemp("integers"))


def launch(kernel, count, *arguments):
    kernel[max(1, (count + 127) // 128), 128](*arguments)


# --- Python references following Numba ---------------------------------------


def floor_divide(x, y, dtype):
    if y == 0:
        return 0
    if dtype == "int64" and x == -(1 << 63) and y == -1:
        return 0  # numba-cuda: "We return 0, 0 instead (more or less like Numpy)"
    return x // y


def modulo(x, y, dtype):
    if y == 0 or (dtype == "int64" and x == -(1 << 63) and y == -1):
        return 0
    return x % y


def power(x, y, dtype):
    """Numba's int_power for an integer result type `dtype`."""
    x = wrap(x, dtype)
    if y < 0:
        if x == 0:
            return wrap(-1 << 63, dtype)  # _get_power_zerodiv_return
        if x not in (1, -1):
            return 0
    exponent = abs(y)
    if exponent > 0x10000:
        with np.errstate(over="ignore"):
            return saturate(float(np.float64(x) ** np.float64(y)), dtype)
    return wrap(pow(x, exponent, 1 << 64), dtype)


def shift_left(x, y, dtype):
    return 0 if y >= 64 else wrap(x << y, dtype)


def shift_right(x, y, dtype):
    if y >= 64:
        return -1 if x < 0 else 0
    return x >> y


WIDE_OPERATIONS = {
    0: ("x + y", lambda x, y, r: wrap(x + y, r)),
    1: ("x - y", lambda x, y, r: wrap(x - y, r)),
    2: ("x * y", lambda x, y, r: wrap(x * y, r)),
    3: ("x // y", floor_divide),
    4: ("x % y", modulo),
    5: ("x ** y", power),
    8: ("x & y", lambda x, y, r: wrap(x & y, r)),
    9: ("x | y", lambda x, y, r: wrap(x | y, r)),
    10: ("x ^ y", lambda x, y, r: wrap(x ^ y, r)),
    14: ("divmod(x, y)[0]", floor_divide),
    15: ("divmod(x, y)[1]", modulo),
}


def run_binary(kernels, dtype, a, b):
    count = a.size
    wide = np.zeros((16, count), dtype=result_dtype(dtype))
    narrow = np.zeros((6, count), dtype=dtype)
    truth = np.zeros((8, count), dtype=np.bool_)
    launch(getattr(kernels, f"binary_{dtype}"), count, a, b, wide, narrow, truth)
    return wide, narrow, truth


# --- Tests ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("row", sorted(WIDE_OPERATIONS))
def test_binary_arithmetic(kernels, dtype, row):
    a, b = pairs(dtype)
    wide, _, _ = run_binary(kernels, dtype, a, b)
    text, reference = WIDE_OPERATIONS[row]
    r = result_dtype(dtype)
    operands = [(dtype, int(x), int(y)) for x, y in zip(a, b)]
    expected = [reference(int(x), int(y), r) for x, y in zip(a, b)]
    check(wide[row], expected, text, operands)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_shifts(kernels, dtype):
    amounts = [v for v in range(0, 70) if v <= info(dtype).max] + [100, 127]
    a, b = pairs(dtype, right=[v for v in amounts if v <= info(dtype).max])
    wide, _, _ = run_binary(kernels, dtype, a, b)
    r = result_dtype(dtype)
    operands = [(dtype, int(x), int(y)) for x, y in zip(a, b)]
    check(wide[6], [shift_left(int(x), int(y), r) for x, y in zip(a, b)], "x << y", operands)
    check(wide[7], [shift_right(int(x), int(y), r) for x, y in zip(a, b)], "x >> y", operands)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_unary(kernels, dtype):
    values = edge_values(dtype)
    a = np.array(values, dtype=dtype)
    wide, narrow, truth = run_binary(kernels, dtype, a, a)
    operands = [(dtype, v) for v in values]
    # Numba negates and inverts in the operand's width, then widens.
    check(wide[11], [wrap(-v, dtype) for v in values], "-x", operands)
    check(wide[12], [wrap(~v, dtype) for v in values], "~x", operands)
    check(wide[13], values, "+x", operands)
    check(narrow[0], [wrap(abs(v), dtype) for v in values], "abs(x)", operands)
    check(truth[6], [v != 0 for v in values], "bool(x)", operands)
    check(truth[7], [v == 0 for v in values], "not x", operands)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_comparisons_min_max_and_narrowing_stores(kernels, dtype):
    a, b = pairs(dtype)
    _, narrow, truth = run_binary(kernels, dtype, a, b)
    xs, ys = [int(v) for v in a], [int(v) for v in b]
    operands = [(dtype, x, y) for x, y in zip(xs, ys)]
    check(narrow[1], [min(x, y) for x, y in zip(xs, ys)], "min(x, y)", operands)
    check(narrow[2], [max(x, y) for x, y in zip(xs, ys)], "max(x, y)", operands)
    check(narrow[3], [wrap(x + y, dtype) for x, y in zip(xs, ys)], "store of x + y", operands)
    check(narrow[4], [wrap(x * y, dtype) for x, y in zip(xs, ys)], "store of x * y", operands)
    r = result_dtype(dtype)
    check(narrow[5], [wrap(floor_divide(x, y, r), dtype) for x, y in zip(xs, ys)], "x //= y", operands)
    for row, (text, op) in enumerate(
        [
            ("x < y", lambda x, y: x < y),
            ("x <= y", lambda x, y: x <= y),
            ("x > y", lambda x, y: x > y),
            ("x >= y", lambda x, y: x >= y),
            ("x == y", lambda x, y: x == y),
            ("x != y", lambda x, y: x != y),
        ]
    ):
        check(truth[row], [op(x, y) for x, y in zip(xs, ys)], text, operands)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_literal_exponents(kernels, dtype):
    values = edge_values(dtype)
    a = np.array(values, dtype=dtype)
    out = np.zeros((8, a.size), dtype=np.int64)
    launch(getattr(kernels, f"literal_powers_{dtype}"), a.size, a, out)
    # The exponent is an int64 literal, so the power is int64 arithmetic.
    for row, exponent in enumerate([0, 1, 2, 3, 7, -1, -2, 64]):
        check(
            out[row],
            [power(v, exponent, "int64") for v in values],
            f"x ** {exponent}",
            [(dtype, v) for v in values],
        )


FLOAT_INPUTS = [
    0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.0, -1.0, 1.9, -1.9, 2.5, -2.5, 100.7, -100.7,
    127.0, 127.9, 128.0, -128.0, -128.9, -129.0, 255.0, 255.9, 256.0, 32767.5, 32768.0,
    -32768.5, -32769.0, 65535.9, 65536.0, 2.0**31 - 1, 2.0**31, -(2.0**31), -(2.0**31) - 1,
    2.0**32 - 1, 2.0**32, 2.0**53 + 2, 2.0**63, -(2.0**63), 2.0**64, 1e30, -1e30,
    float("inf"), float("-inf"), float("nan"), 5e-324,
]


@pytest.mark.parametrize("dtype", INTEGERS)
def test_float_to_integer_truncates_and_saturates(kernels, dtype):
    x = np.array(FLOAT_INPUTS, dtype=np.float64)
    y = x.astype(np.float32)
    out = np.zeros((4, x.size), dtype=dtype)
    launch(getattr(kernels, f"from_float_{dtype}"), x.size, x, y, out)
    wide_ops = [("float64",) + (v,) for v in x.tolist()]
    narrow_ops = [("float32",) + (v,) for v in y.tolist()]
    expected64 = [saturate(v, dtype) for v in x.tolist()]
    expected32 = [saturate(v, dtype) for v in y.tolist()]
    check(out[0], expected64, f"{dtype}(x)", wide_ops)
    check(out[1], expected64, f"store of float64 into {dtype} array", wide_ops)
    check(out[2], expected32, f"{dtype}(x)", narrow_ops)
    check(out[3], expected32, f"np.{dtype}(x)", narrow_ops)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_to_float_rounds_to_nearest(kernels, dtype):
    values = edge_values(dtype) + [
        v for v in [2**24 + 1, 2**53 + 1, -(2**53) - 1, 2**63 - 513, 2**64 - 1025]
        if info(dtype).min <= v <= info(dtype).max
    ]
    a = np.array(values, dtype=dtype)
    f64 = np.zeros(a.size)
    f32 = np.zeros(a.size, dtype=np.float32)
    launch(getattr(kernels, f"to_float_{dtype}"), a.size, a, f64, f32)
    operands = [(dtype, v) for v in values]
    check(f64, [float(np.float64(v)) for v in a], "float(x)", operands)
    check(f32, [float(np.float32(v)) for v in a], "float32(x)", operands)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_narrowing_wraps(kernels, dtype):
    signed = [0, 1, -1, 127, 128, -128, -129, 255, 256, 65535, 65536, -65537, 2**31, -(2**31) - 1,
              2**32 + 5, 2**63 - 1, -(2**63)]
    unsigned = [0, 1, 255, 256, 2**32 - 1, 2**63, 2**64 - 1, 2**64 - 129]
    count = max(len(signed), len(unsigned))
    a = np.array(signed + [0] * (count - len(signed)), dtype=np.int64)
    u = np.array(unsigned + [0] * (count - len(unsigned)), dtype=np.uint64)
    out = np.zeros((3, count), dtype=dtype)
    launch(getattr(kernels, f"from_wide_{dtype}"), count, a, u, out)
    check(out[0], [wrap(int(v), dtype) for v in a], f"{dtype}(int64 x)", [("int64", int(v)) for v in a])
    check(out[1], [wrap(int(v), dtype) for v in u], f"{dtype}(uint64 x)", [("uint64", int(v)) for v in u])
    check(out[2], [wrap(int(v), dtype) for v in a], f"store of int64 into {dtype}", [("int64", int(v)) for v in a])


@pytest.mark.parametrize("left,right", MIXED_PAIRS)
def test_mixed_signedness(kernels, left, right):
    a, b = [], []
    for x, y in itertools.product(edge_values(left), edge_values(right)):
        a.append(x)
        b.append(y)
    # Values that differ beyond float64's precision, where Numba compares
    # int64 with uint64 as float64.
    if {left, right} == {"int64", "uint64"}:
        a += [2**53 + 1, 2**62 + 1] if left == "int64" else [2**53, 2**62]
        b += [2**53, 2**62] if right == "uint64" else [2**53 + 1, 2**62 + 1]
    a = np.array(a, dtype=left)
    b = np.array(b, dtype=right)
    unified = np.promote_types(left, right)
    count = a.size
    wide = np.zeros((7, count), dtype=np.int64)
    minmax = np.zeros((2, count), dtype=unified)
    truth = np.zeros((6, count), dtype=np.bool_)
    launch(getattr(kernels, f"mixed_{left}_{right}"), count, a, b, wide, minmax, truth)
    xs, ys = [int(v) for v in a], [int(v) for v in b]
    operands = [(left, x, right, y) for x, y in zip(xs, ys)]
    sx, sy = [wrap(x, "int64") for x in xs], [wrap(y, "int64") for y in ys]
    check(wide[0], [wrap(x + y, "int64") for x, y in zip(sx, sy)], "x + y (int64)", operands)
    check(wide[1], [wrap(x - y, "int64") for x, y in zip(sx, sy)], "x - y (int64)", operands)
    check(wide[2], [wrap(x * y, "int64") for x, y in zip(sx, sy)], "x * y (int64)", operands)
    check(wide[3], [floor_divide(x, y, "int64") for x, y in zip(sx, sy)], "x // y (int64)", operands)
    check(wide[4], [modulo(x, y, "int64") for x, y in zip(sx, sy)], "x % y (int64)", operands)
    # Shifts keep the left operand's signedness, in 64 bits; the amount,
    # converted to that type, counts as unsigned (negative is beyond the width).
    shifted = result_dtype(left)
    lx = [wrap(x, shifted) for x in xs]
    amounts = [y % 2**64 for y in ys]
    check(wide[5], [wrap(shift_left(x, n, shifted), "int64") for x, n in zip(lx, amounts)],
          f"x << y ({shifted})", operands)
    check(wide[6], [wrap(shift_right(x, n, shifted), "int64") for x, n in zip(lx, amounts)],
          f"x >> y ({shifted})", operands)
    cx = [unified.type(v).item() for v in a]
    cy = [unified.type(v).item() for v in b]
    check(minmax[0], [y if y < x else x for x, y in zip(cx, cy)], f"min(x, y) as {unified}", operands)
    check(minmax[1], [y if y > x else x for x, y in zip(cx, cy)], f"max(x, y) as {unified}", operands)
    for row, (text, op) in enumerate(
        [
            ("x < y", lambda x, y: x < y),
            ("x <= y", lambda x, y: x <= y),
            ("x == y", lambda x, y: x == y),
            ("x != y", lambda x, y: x != y),
            ("x > y", lambda x, y: x > y),
            ("x >= y", lambda x, y: x >= y),
        ]
    ):
        check(truth[row], [op(x, y) for x, y in zip(cx, cy)], f"{text} compared as {unified}", operands)


def test_bool_arithmetic(kernels):
    p = np.array([False, False, True, True])
    q = np.array([False, True, False, True])
    ints = np.zeros((11, 4), dtype=np.int64)
    truth = np.zeros((9, 4), dtype=np.bool_)
    launch(kernels.booleans, 4, p, q, ints, truth)
    xs, ys = [int(v) for v in p], [int(v) for v in q]
    operands = list(zip(p.tolist(), q.tolist()))
    expected = {
        0: ("x + y", [x + y for x, y in zip(xs, ys)]),
        1: ("x - y", [x - y for x, y in zip(xs, ys)]),
        2: ("x * y", [x * y for x, y in zip(xs, ys)]),
        3: ("x // y", [x // y if y else 0 for x, y in zip(xs, ys)]),
        4: ("x % y", [x % y if y else 0 for x, y in zip(xs, ys)]),
        5: ("-x", [-x for x in xs]),
        6: ("+x", xs),
        7: ("abs(x)", xs),
        8: ("x + 1", [x + 1 for x in xs]),
        9: ("x * 5 - y", [x * 5 - y for x, y in zip(xs, ys)]),
        10: ("int(x)", xs),
    }
    for row, (text, values) in expected.items():
        check(ints[row], values, text, operands)
    logical = {
        0: ("x & y", [bool(x & y) for x, y in zip(xs, ys)]),
        1: ("x | y", [bool(x | y) for x, y in zip(xs, ys)]),
        2: ("x ^ y", [bool(x ^ y) for x, y in zip(xs, ys)]),
        3: ("~x (logical not, as Numba)", [not x for x in xs]),
        4: ("not x", [not x for x in xs]),
        5: ("x < y", [x < y for x, y in zip(xs, ys)]),
        6: ("x == y", [x == y for x, y in zip(xs, ys)]),
        7: ("min(x, y)", [bool(min(x, y)) for x, y in zip(xs, ys)]),
        8: ("max(x, y)", [bool(max(x, y)) for x, y in zip(xs, ys)]),
    }
    for row, (text, values) in logical.items():
        check(truth[row], values, text, operands)
