"""NumPy ufuncs called inside kernels, as Numba's CUDA target runs them: on
scalars (`np.sin(x)` is a number) and on arrays with an output array
(`np.hypot(a, b, out)` fills `out`, broadcasting its inputs onto it). The
loop each call runs is NumPy's, chosen by Numba's rule, which the test takes
from numba-cuda itself (`ufunc_find_matching_loop`); the values are checked
on the CPU engine against NumPy computing in that loop's types, and the
kernels go through ptxas for every default architecture."""

import itertools

import numpy as np
import pytest
from numba.cuda import types as numba_types
from numba.cuda.np.numpy_support import ufunc_find_matching_loop

import kiln_cpu

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float32", "float64", "complex64", "complex128"]
SIGNATURE_NAMES = {"bool": "boolean"}


def sample(dtype):
    """A value of `dtype` that tells loops apart: a wrong signedness or
    precision changes the result."""
    kind = np.dtype(dtype).kind
    value = {"b": True, "i": -1, "u": 5, "f": -1.5, "c": -1.5 + 0.5j}[kind]
    return np.dtype(dtype).type(value)


def numba_loop(ufunc, dtypes):
    """The loop Numba runs for inputs of `dtypes`, as NumPy type codes."""
    loop = ufunc_find_matching_loop(ufunc, tuple(getattr(numba_types, SIGNATURE_NAMES.get(d, d))
                                                 for d in dtypes))
    return None if loop is None else loop.ufunc_sig


def in_loop_types(ufunc, loop, values):
    """NumPy's result of `ufunc` on `values`, computed in `loop`'s types."""
    codes, output = loop.split("->")
    arrays = [np.array([v]).astype(np.dtype(code)) for v, code in zip(values, codes)]
    return ufunc(*arrays, dtype=np.dtype(output))[0] if len(arrays) > 1 else \
        ufunc(arrays[0], dtype=np.dtype(output))[0]


def loop_cases(ufunc, pairs):
    cases = []
    for dtypes in pairs:
        loop = numba_loop(ufunc, dtypes)
        if loop is not None:
            cases.append((dtypes, loop))
    return cases


SELECTION = {
    # Safe casts, with Numba's rule that integers cast to any float loop when
    # the inputs mix integers and floats.
    np.divide: loop_cases(np.divide, itertools.product(DTYPES, DTYPES)),
    # Signedness: int64 against uint64 has a loop of its own; int8 against
    # uint8 computes in int16.
    np.greater_equal: loop_cases(np.greater_equal, itertools.product(DTYPES[:9], DTYPES[:9])),
    np.maximum: loop_cases(np.maximum, itertools.product(DTYPES, DTYPES)),
    np.sin: loop_cases(np.sin, [(d,) for d in DTYPES]),
}


@pytest.fixture(scope="module")
def selection(tmp_path_factory):
    lines = ["import numpy as np", "from numba import cuda", ""]
    for ufunc, cases in SELECTION.items():
        for n, (dtypes, _) in enumerate(cases):
            parameters = ", ".join(f"x{i}" for i in range(len(dtypes)))
            signature = ", ".join(SIGNATURE_NAMES.get(d, d) for d in dtypes)
            lines += [f'@cuda.jit("void(complex128[::1], {signature})")',
                      f"def {ufunc.__name__}_{n}(out, {parameters}):",
                      f"    out[0] = np.{ufunc.__name__}({parameters})", ""]
    return kiln_cpu.compile_source("\n".join(lines), tmp_path_factory.mktemp("ufunc_loops"))


@pytest.mark.parametrize("ufunc", SELECTION, ids=lambda u: u.__name__)
def test_scalar_calls_run_the_loop_numba_chooses(selection, ufunc):
    for n, (dtypes, loop) in enumerate(SELECTION[ufunc]):
        values = [sample(d) for d in dtypes]
        out = np.zeros(1, np.complex128)
        getattr(selection, f"{ufunc.__name__}_{n}")[1, 1](out, *values)
        with np.errstate(all="ignore"):
            expected = np.complex128(in_loop_types(ufunc, loop, values))
        message = (f"np.{ufunc.__name__}{tuple(dtypes)} should run loop {loop} and give "
                   f"{expected}, got {out[0]}")
        if ufunc is not np.sin:
            assert out[0] == expected, message
            continue
        # sin is not correctly rounded everywhere: the loop shows in the
        # precision of the result.
        single = loop.endswith(("f", "F"))
        assert np.isclose(out[0], expected, rtol=3e-7 if single else 1e-15), message
        assert (np.complex64(out[0]) == out[0]) == single, message


FLOAT_UNARY = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
               "arcsinh", "arccosh", "arctanh", "log", "log2", "log10"]
REAL_ONLY = ["deg2rad", "radians", "rad2deg", "degrees"]
BINARY_REAL = ["arctan2", "hypot"]

ELEMENTWISE_SOURCE = """\
import numpy as np
from numba import cuda, float32, float64, complex128, void

{kernels}
"""


def elementwise_kernels():
    kernels = []
    for name in FLOAT_UNARY + REAL_ONLY:
        for dtype in ["float32", "float64"] + (["complex128"] if name in FLOAT_UNARY else []):
            kernels.append(f"@cuda.jit(void({dtype}[::1], {dtype}[::1]))\n"
                           f"def {name}_{dtype}(x, out):\n"
                           f"    for i in range(x.size):\n"
                           f"        out[i] = np.{name}(x[i])\n")
    for name in BINARY_REAL:
        for dtype in ["float32", "float64"]:
            kernels.append(f"@cuda.jit(void({dtype}[::1], {dtype}[::1], {dtype}[::1]))\n"
                           f"def {name}_{dtype}(x, y, out):\n"
                           f"    for i in range(x.size):\n"
                           f"        out[i] = np.{name}(x[i], y[i])\n")
    return "\n".join(kernels)


@pytest.fixture(scope="module")
def elementwise(tmp_path_factory):
    source = ELEMENTWISE_SOURCE.format(kernels=elementwise_kernels())
    return kiln_cpu.compile_source(source, tmp_path_factory.mktemp("ufunc_math"))


def inputs_for(name, dtype):
    if name == "arccosh":
        real = np.array([1.0, 1.5, 3.0, 10.0])
    elif name in ("arcsin", "arccos", "arctanh"):
        real = np.array([-0.9, -0.25, 0.0, 0.5, 0.75])
    elif name.startswith("log"):
        real = np.array([0.125, 0.5, 1.0, 3.0, 1e10])
    else:
        real = np.array([-3.0, -0.5, 0.0, 0.25, 2.0])
    if dtype == "complex128":
        return (real + 1j * real[::-1]).astype(dtype)
    return real.astype(dtype)


@pytest.mark.parametrize("name", FLOAT_UNARY + REAL_ONLY)
def test_math_ufuncs_match_numpy(elementwise, name):
    for dtype in ["float32", "float64"] + (["complex128"] if name in FLOAT_UNARY else []):
        x = inputs_for(name, dtype)
        out = np.zeros_like(x)
        getattr(elementwise, f"{name}_{dtype}")[1, 1](x, out)
        tolerance = 2e-6 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(out, getattr(np, name)(x), rtol=tolerance, atol=tolerance,
                                   err_msg=f"np.{name} on {dtype}")


@pytest.mark.parametrize("name", BINARY_REAL)
def test_binary_math_ufuncs_match_numpy(elementwise, name):
    for dtype in ["float32", "float64"]:
        x = np.array([-3.0, -0.5, 0.0, 0.25, 2.0], dtype)
        y = np.array([1.0, -2.0, 0.5, 0.0, -0.75], dtype)
        out = np.zeros_like(x)
        getattr(elementwise, f"{name}_{dtype}")[1, 1](x, y, out)
        tolerance = 2e-6 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(out, getattr(np, name)(x, y), rtol=tolerance,
                                   err_msg=f"np.{name} on {dtype}")


NUMPY_RULES_SOURCE = """\
import numpy as np
from numba import cuda, boolean, float64, complex128, int64, uint64, void


@cuda.jit(void(float64[::1], float64[::1], float64[::1], float64[::1], float64[::1], float64[::1]))
def extrema(x, y, maximum, minimum, fmax, fmin):
    for i in range(x.size):
        maximum[i] = np.maximum(x[i], y[i])
        minimum[i] = np.minimum(x[i], y[i])
        fmax[i] = np.fmax(x[i], y[i])
        fmin[i] = np.fmin(x[i], y[i])


@cuda.jit(void(complex128[::1], complex128[::1], complex128[::1], complex128[::1],
               boolean[:, ::1]))
def complex_rules(x, y, maximum, quotient, order):
    for i in range(x.size):
        maximum[i] = np.maximum(x[i], y[i])
        quotient[i] = np.divide(x[i], y[i])
        order[i, 0] = np.less(x[i], y[i])
        order[i, 1] = np.less_equal(x[i], y[i])
        order[i, 2] = np.greater(x[i], y[i])
        order[i, 3] = np.greater_equal(x[i], y[i])
        order[i, 4] = np.equal(x[i], y[i])
        order[i, 5] = np.isnan(x[i])
        order[i, 6] = np.logical_and(x[i], y[i])
        order[i, 7] = np.logical_not(x[i])


@cuda.jit(void(int64[::1], uint64[::1], boolean[:, ::1]))
def signed_against_unsigned(x, y, order):
    for i in range(x.size):
        order[i, 0] = np.less(x[i], y[i])
        order[i, 1] = np.greater(y[i], x[i])
        order[i, 2] = np.not_equal(x[i], y[i])
        order[i, 3] = np.equal(y[i], x[i])


@cuda.jit(void(int64[::1], int64[::1], int64[:, ::1]))
def integer_bits(x, y, out):
    for i in range(x.size):
        out[i, 0] = np.bitwise_and(x[i], y[i])
        out[i, 1] = np.bitwise_or(x[i], y[i])
        out[i, 2] = np.bitwise_xor(x[i], y[i])
        out[i, 3] = np.invert(x[i])
        out[i, 4] = np.bitwise_not(y[i])
        out[i, 5] = np.left_shift(x[i], 3)
        out[i, 6] = np.right_shift(y[i], 1)
        out[i, 7] = np.logical_xor(x[i], y[i])
        out[i, 8] = np.conjugate(x[i])


@cuda.jit(void(boolean[::1], boolean[::1], boolean[:, ::1]))
def booleans(x, y, out):
    for i in range(x.size):
        out[i, 0] = np.invert(x[i])
        out[i, 1] = np.maximum(x[i], y[i])
        out[i, 2] = np.minimum(x[i], y[i])
        out[i, 3] = np.bitwise_xor(x[i], y[i])
"""


@pytest.fixture(scope="module")
def numpy_rules(tmp_path_factory):
    return kiln_cpu.compile_source(NUMPY_RULES_SOURCE, tmp_path_factory.mktemp("ufunc_rules"))


def test_maximum_propagates_nans_and_fmax_skips_them(numpy_rules):
    nan = np.nan
    x = np.array([1.0, nan, 2.0, nan, -0.0, 3.0])
    y = np.array([2.0, 1.0, nan, nan, 0.0, -1.0])
    outs = [np.zeros_like(x) for _ in range(4)]
    numpy_rules.extrema[1, 1](x, y, *outs)
    for out, ufunc in zip(outs, [np.maximum, np.minimum, np.fmax, np.fmin]):
        np.testing.assert_array_equal(out, ufunc(x, y), err_msg=ufunc.__name__)


def test_complex_numbers_follow_numpys_order_and_division(numpy_rules):
    nan, inf = np.nan, np.inf
    x = np.array([1 + 2j, 1 + 2j, 3 - 1j, complex(nan, 0), 2 + 0j, 1 + 1j, 0j, 1 + 1j])
    y = np.array([1 + 3j, 1 + 2j, 2 + 5j, 1 + 0j, complex(2, nan), 0j, 0j, complex(inf, 1)])
    maximum = np.zeros_like(x)
    quotient = np.zeros_like(x)
    order = np.zeros((x.size, 8), np.bool_)
    with np.errstate(all="ignore"):
        numpy_rules.complex_rules[1, 1](x, y, maximum, quotient, order)
        np.testing.assert_array_equal(maximum, np.maximum(x, y))
        np.testing.assert_allclose(quotient, np.divide(x, y), rtol=1e-15)
        expected = np.stack([np.less(x, y), np.less_equal(x, y), np.greater(x, y),
                             np.greater_equal(x, y), np.equal(x, y), np.isnan(x),
                             np.logical_and(x, y), np.logical_not(x)], axis=1)
    np.testing.assert_array_equal(order, expected)


def test_int64_and_uint64_compare_by_value(numpy_rules):
    x = np.array([-1, 0, 2**62, -(2**63)], np.int64)
    y = np.array([2**64 - 1, 0, 2**63, 0], np.uint64)
    order = np.zeros((x.size, 4), np.bool_)
    numpy_rules.signed_against_unsigned[1, 1](x, y, order)
    expected = np.stack([np.less(x, y), np.greater(y, x), np.not_equal(x, y), np.equal(y, x)],
                        axis=1)
    np.testing.assert_array_equal(order, expected)


def test_integer_and_boolean_ufuncs_match_numpy(numpy_rules):
    x = np.array([12, -7, 0, 2**40], np.int64)
    y = np.array([10, 3, -1, 5], np.int64)
    out = np.zeros((x.size, 9), np.int64)
    numpy_rules.integer_bits[1, 1](x, y, out)
    expected = np.stack([x & y, x | y, x ^ y, ~x, ~y, x << 3, y >> 1,
                         np.logical_xor(x, y), np.conjugate(x)], axis=1)
    np.testing.assert_array_equal(out, expected)

    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    flags = np.zeros((4, 4), np.bool_)
    numpy_rules.booleans[1, 1](p, q, flags)
    np.testing.assert_array_equal(
        flags, np.stack([np.invert(p), np.maximum(p, q), np.minimum(p, q), p ^ q], axis=1))


DEBUG_DIVISION_SOURCE = """\
import numpy as np
from numba import cuda, complex128, float64, void


@cuda.jit(void(float64[::1], float64[::1], float64[::1]), debug=True, opt=False)
def real_quotients(x, y, out):
    for i in range(x.size):
        out[i] = np.divide(x[i], y[i])


@cuda.jit(void(complex128[::1], complex128[::1], complex128[::1]), debug=True, opt=False)
def complex_quotients(x, y, out):
    for i in range(x.size):
        out[i] = np.true_divide(x[i], y[i])
"""


def test_division_by_zero_never_raises_even_with_debug(tmp_path):
    module = kiln_cpu.compile_source(DEBUG_DIVISION_SOURCE, tmp_path)
    x = np.array([1.0, -1.0, 0.0, 3.0, 1.0])
    y = np.array([0.0, 0.0, 0.0, 2.0, -0.0])
    out = np.zeros_like(x)
    module.real_quotients[1, 1](x, y, out)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, np.divide(x, y))
    z = np.array([1 + 1j, 2 - 1j, 0j])
    w = np.array([0j, 1 + 1j, 0j])
    quotients = np.zeros_like(z)
    module.complex_quotients[1, 1](z, w, quotients)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(quotients, np.divide(z, w), rtol=1e-15)


ARRAY_SOURCE = """\
import numpy as np
from numba import cuda, boolean, complex128, float32, float64, int32, int64, uint64, void


@cuda.jit(void(float64[:, :], float64[:], float64[:, :]))
def hypot_broadcast(a, b, out):
    np.hypot(a, b, out)


@cuda.jit(void(float64[:, :, :], float64[:, :, :]))
def sin_3d(a, out):
    np.sin(a, out)


@cuda.jit(void(float64[::1, :], float32[::1, :]))
def cos_fortran_to_float32(a, out):
    np.cos(a, out)


@cuda.jit(void(float64, float64[:, :]))
def scalar_fills(x, out):
    np.arctan(x, out)


@cuda.jit(void(float64[:, :], float64[:], boolean[:, :]))
def greater_rows(a, row, out):
    np.greater(a, row, out)


@cuda.jit(void(int32[:], int32[:], int32[:]))
def comparison_into_integers(a, b, out):
    np.less(a, b, out)


@cuda.jit(void(float64[:, :], float64[:, :]))
def call_returns_output(a, out):
    result = np.tanh(a, out)
    result[0, 0] = -1.0


@cuda.jit(void(complex128[:], complex128[:]))
def complex_log2(z, out):
    np.log2(z, out)
"""


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    return kiln_cpu.compile_source(ARRAY_SOURCE, tmp_path_factory.mktemp("ufunc_arrays"))


def test_inputs_broadcast_onto_the_output(arrays):
    a = np.arange(12.0).reshape(3, 4)
    b = np.array([1.0, 2.0, 3.0, 4.0])
    out = np.zeros((3, 4))
    arrays.hypot_broadcast[1, 1](a, b, out)
    np.testing.assert_allclose(out, np.hypot(a, b), rtol=1e-15)

    column = np.arange(3.0).reshape(3, 1)
    out = np.zeros((3, 4))
    arrays.hypot_broadcast[1, 1](column, b, out)
    np.testing.assert_allclose(out, np.hypot(column, b), rtol=1e-15)

    a = np.arange(24.0).reshape(2, 3, 4) / 7
    out = np.zeros((2, 3, 4))
    arrays.sin_3d[1, 1](a, out)
    np.testing.assert_allclose(out, np.sin(a), rtol=1e-15)

    row = np.array([2.0, 5.0, 8.0, 11.0])
    flags = np.zeros((3, 4), np.bool_)
    arrays.greater_rows[1, 1](np.arange(12.0).reshape(3, 4), row, flags)
    np.testing.assert_array_equal(flags, np.arange(12.0).reshape(3, 4) > row)


def test_outputs_of_any_layout_and_dtype(arrays):
    a = np.asfortranarray(np.linspace(0, 1, 12).reshape(3, 4))
    out = np.zeros((3, 4), np.float32, order="F")
    arrays.cos_fortran_to_float32[1, 1](a, out)
    np.testing.assert_allclose(out, np.cos(a).astype(np.float32), rtol=1e-7)

    strided = np.zeros((6, 8))[::2, 1::2]
    arrays.scalar_fills[1, 1](0.5, strided)
    np.testing.assert_array_equal(strided, np.full((3, 4), np.arctan(0.5)))

    out = np.zeros(3, np.int32)
    arrays.comparison_into_integers[1, 1](np.array([1, 5, 3], np.int32),
                                          np.array([2, 5, 1], np.int32), out)
    np.testing.assert_array_equal(out, [1, 0, 0])

    z = np.array([1 + 1j, -2 + 0.5j, 0.25j])
    out = np.zeros(3, np.complex128)
    arrays.complex_log2[1, 1](z, out)
    np.testing.assert_allclose(out, np.log2(z), rtol=1e-14)


def test_a_call_with_an_output_array_returns_it(arrays):
    a = np.linspace(-1, 1, 6).reshape(2, 3)
    out = np.zeros((2, 3))
    arrays.call_returns_output[1, 1](a, out)
    expected = np.tanh(a)
    expected[0, 0] = -1.0
    np.testing.assert_allclose(out, expected, rtol=1e-15)


def test_ufunc_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    source = ARRAY_SOURCE + "\n" + NUMPY_RULES_SOURCE.split("\n", 2)[2]
    binaries = kiln_cpu.fat_binaries_for_every_default_architecture(source, tmp_path, kiln)
    assert len(binaries) == 13

