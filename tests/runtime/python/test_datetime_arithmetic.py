"""datetime64 and timedelta64 in kernels, checked element by element against
NumPy's own arithmetic on the same arrays: every unit pairing Numba types,
years and months converted through the calendar, NaT passed on by every
operation, and kernels specialized on demand for each unit as Numba's
typeof makes them (NPDatetime('D'), NPTimedelta('s'))."""

import numpy as np
import pytest
from kiln import _compiler

KERNELS = '''
import numpy as np
from kiln import cuda


@cuda.jit
def subtract(a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i] - b[i]


@cuda.jit
def add(a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i] + b[i]


@cuda.jit
def multiply(a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i] * b[i]


@cuda.jit
def divide(a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i] / b[i]


@cuda.jit
def floor_divide(a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i] // b[i]


@cuda.jit
def negate(a, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = -a[i]


@cuda.jit
def inspect(a, absolute, nat, counts):
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        absolute[i] = abs(a[i])
        nat[i] = np.isnat(a[i])
        counts[i] = np.int64(a[i])


@cuda.jit
def compare(a, b, out):
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        out[i, 0] = a[i] == b[i]
        out[i, 1] = a[i] != b[i]
        out[i, 2] = a[i] < b[i]
        out[i, 3] = a[i] <= b[i]
        out[i, 4] = a[i] > b[i]
        out[i, 5] = a[i] >= b[i]


@cuda.jit
def shift_by(dates, delta, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = dates[i] - delta
'''

N = 200
rng = np.random.default_rng(7)


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("datetime_kernels", KERNELS)


def values(dtype, low=-(10**6), high=10**6):
    """Random values of `dtype` around the epoch, every tenth NaT."""
    counts = rng.integers(low, high, N)
    counts[::10] = np.iinfo(np.int64).min
    return counts.view(dtype)


def same(got, expected, what):
    np.testing.assert_array_equal(got.view(np.int64), expected.view(np.int64), err_msg=what)


@pytest.mark.parametrize("a_unit, b_unit", [("D", "D"), ("M", "D"), ("Y", "s"), ("W", "M"),
                                            ("h", "D"), ("Y", "M"), ("us", "ms")])
def test_datetimes_subtract_into_a_timedelta_of_the_finer_unit(kernels, a_unit, b_unit):
    a, b = values(f"M8[{a_unit}]", -3000, 3000), values(f"M8[{b_unit}]", -3000, 3000)
    expected = a - b
    out = np.zeros(N, expected.dtype)
    kernels.subtract[2, 32](a, b, out)
    same(out, expected, f"M8[{a_unit}] - M8[{b_unit}]")


@pytest.mark.parametrize("dt_unit, td_unit", [("D", "h"), ("M", "D"), ("Y", "M"), ("M", "W"),
                                              ("s", "s"), ("D", "W"), ("Y", "D")])
def test_datetimes_move_by_timedeltas_either_way(kernels, dt_unit, td_unit):
    dates, deltas = values(f"M8[{dt_unit}]", -3000, 3000), values(f"m8[{td_unit}]")
    for kernel, expected, what in [(kernels.add, dates + deltas, "+"),
                                   (kernels.subtract, dates - deltas, "-")]:
        out = np.zeros(N, expected.dtype)
        kernel[2, 32](dates, deltas, out)
        same(out, expected, f"M8[{dt_unit}] {what} m8[{td_unit}]")
    out = np.zeros(N, (deltas + dates).dtype)
    kernels.add[2, 32](deltas, dates, out)
    same(out, deltas + dates, f"m8[{td_unit}] + M8[{dt_unit}]")


@pytest.mark.parametrize("a_unit, b_unit", [("D", "s"), ("ms", "us"), ("Y", "M"), ("W", "h")])
def test_timedeltas_add_and_subtract_in_the_finer_unit(kernels, a_unit, b_unit):
    a, b = values(f"m8[{a_unit}]"), values(f"m8[{b_unit}]")
    for kernel, expected in [(kernels.add, a + b), (kernels.subtract, a - b)]:
        out = np.zeros(N, expected.dtype)
        kernel[2, 32](a, b, out)
        same(out, expected, f"m8[{a_unit}] and m8[{b_unit}]")
    out = np.zeros(N, np.float64)
    kernels.divide[2, 32](a, b, out)
    np.testing.assert_array_equal(out, a / b)


def scaled_as_numba_does(deltas, numbers, operation):
    """Numba scales a timedelta in the number's own type: a float32 product
    is rounded to float32 (NumPy would compute in float64), then truncated;
    an integer quotient truncates, as C's division; NaN, NaT and division by
    zero give NaT."""
    counts = deltas.view(np.int64)
    nat = np.iinfo(np.int64).min
    with np.errstate(divide="ignore", invalid="ignore"):
        if numbers.dtype.kind == "f":
            result = operation(counts.astype(numbers.dtype), numbers)
            bad = np.isnan(result) | np.isnat(deltas)
            if operation is np.divide:
                bad |= numbers == 0
            whole = np.where(bad, 0, result).astype(np.int64)
        else:
            divisors = numbers.astype(np.int64)
            safe = np.where(divisors == 0, 1, divisors)
            whole = (counts * divisors if operation is np.multiply
                     else np.sign(counts) * np.sign(safe) * (np.abs(counts) // np.abs(safe)))
            bad = np.isnat(deltas) | ((divisors == 0) & (operation is np.divide))
    return np.where(bad, nat, whole).view(deltas.dtype)


@pytest.mark.parametrize("number_dtype", [np.int64, np.int32, np.float64, np.float32])
def test_timedeltas_scale_and_divide_by_numbers(kernels, number_dtype):
    deltas = values("m8[s]")
    numbers = rng.integers(-50, 50, N).astype(number_dtype)
    if number_dtype in (np.float64, np.float32):
        numbers = (numbers / 4).astype(number_dtype)
        numbers[1::17] = np.nan
    out = np.zeros(N, "m8[s]")
    product = scaled_as_numba_does(deltas, numbers, np.multiply)
    if number_dtype != np.float32:
        same(product, deltas * numbers, "the reference agrees with NumPy")
    kernels.multiply[2, 32](deltas, numbers, out)
    same(out, product, f"m8[s] * {np.dtype(number_dtype)}")
    kernels.multiply[2, 32](numbers, deltas, out)
    same(out, product, f"{np.dtype(number_dtype)} * m8[s]")
    quotient = scaled_as_numba_does(deltas, numbers, np.divide)
    if number_dtype != np.float32:
        with np.errstate(divide="ignore", invalid="ignore"):
            same(quotient, deltas / numbers, "the reference agrees with NumPy")
    for kernel in (kernels.divide, kernels.floor_divide):
        kernel[2, 32](deltas, numbers, out)
        same(out, quotient, f"m8[s] / {np.dtype(number_dtype)}")


def test_abs_isnat_and_the_int64_count(kernels):
    deltas = values("m8[us]")
    absolute, nat, counts = np.zeros(N, "m8[us]"), np.zeros(N, np.bool_), np.zeros(N, np.int64)
    kernels.inspect[2, 32](deltas, absolute, nat, counts)
    same(absolute, np.abs(deltas), "abs(m8[us])")
    np.testing.assert_array_equal(nat, np.isnat(deltas))
    np.testing.assert_array_equal(counts, deltas.view(np.int64))
    dates = values("M8[D]")
    with pytest.raises(_compiler.CompileError, match=r"no implementation of 'abs' accepts \(datetime64\[D\]\)"):
        kernels.inspect[1, 1](dates, np.zeros(N, "M8[D]"), nat, counts)


def test_negation_keeps_nat(kernels):
    deltas = values("m8[ms]")
    out = np.zeros(N, "m8[ms]")
    kernels.negate[2, 32](deltas, out)
    same(out, -deltas, "-m8[ms]")


@pytest.mark.parametrize("a_dtype, b_dtype", [("M8[D]", "M8[s]"), ("M8[M]", "M8[D]"),
                                              ("m8[ms]", "m8[s]"), ("m8[Y]", "m8[M]")])
def test_comparisons_convert_units_and_nat_is_unequal_to_everything(kernels, a_dtype, b_dtype):
    a, b = values(a_dtype, -400, 400), values(b_dtype, -400, 400)
    b[2::5] = a[2::5]  # some equal pairs
    out = np.zeros((N, 6), np.bool_)
    kernels.compare[2, 32](a, b, out)
    expected = np.stack([a == b, a != b, a < b, a <= b, a > b, a >= b], axis=1)
    np.testing.assert_array_equal(out, expected, err_msg=f"{a_dtype} vs {b_dtype}")


def test_scalar_arguments_are_datetimes_and_timedeltas_of_their_unit(kernels):
    dates = np.arange("2005-02", "2006-02", dtype="M8[D]")
    out = np.zeros_like(dates)
    kernels.shift_by[1, 32](dates, dates[6] - dates[5], out)
    same(out, dates - np.timedelta64(1, "D"), "M8[D] - np.timedelta64")
    kernels.shift_by[1, 32](dates, np.timedelta64("NaT", "D"), out)
    assert np.isnat(out).all()
    assert sorted(kernels.shift_by.signatures) == [
        "(array(datetime64[D], 1d, C), timedelta64[D], array(datetime64[D], 1d, C))"]


@pytest.mark.parametrize("kernel, a, b, message", [
    ("add", "M8[D]", "M8[D]", r"operator '\+' is not supported between datetime64\[D\] and datetime64\[D\]"),
    ("add", "M8[D]", "m8[M]", r"operator '\+' is not supported between datetime64\[D\] and timedelta64\[M\]"),
    ("subtract", "m8[D]", "m8[M]", r"operator '-' is not supported between timedelta64\[D\] and timedelta64\[M\]"),
    ("floor_divide", "m8[D]", "m8[D]", r"operator '//' is not supported between timedelta64\[D\] and timedelta64\[D\]"),
    ("multiply", "m8[D]", "?", r"operator '\*' is not supported between timedelta64\[D\] and bool"),
    ("compare", "m8[D]", "M8[D]", r"operator '==' is not supported between timedelta64\[D\] and datetime64\[D\]"),
])
def test_what_numba_refuses_is_refused_with_the_types(kernels, kernel, a, b, message):
    out = np.zeros((4, 6), np.bool_) if kernel == "compare" else np.zeros(4, "m8[D]")
    with pytest.raises(_compiler.CompileError, match=message):
        getattr(kernels, kernel)[1, 1](np.zeros(4, a), np.zeros(4, b), out)


def test_stores_take_only_their_own_unit(kernels):
    with pytest.raises(_compiler.CompileError,
                       match=r"cannot store timedelta64\[D\] into array\(timedelta64\[s\], 1d, C\)"):
        kernels.subtract[1, 1](np.zeros(2, "M8[D]"), np.zeros(2, "M8[D]"), np.zeros(2, "m8[s]"))


def test_multiples_of_a_unit_are_named_as_untypable(kernels):
    with pytest.raises(TypeError, match=r"argument 1 has dtype .*10s.*which Kiln cannot specialize"):
        kernels.negate[1, 1](np.zeros(2, "m8[10s]"), np.zeros(2, "m8[10s]"))
