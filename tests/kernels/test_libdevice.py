"""cuda.libdevice: libdevice's `__nv_*` functions called from kernels.

Kiln's table of them (ir/libdevice_functions.def) is numba-cuda's; every one
compiles for GPUs (through ptxas) and runs on the CPU engine, which runs
libdevice's own code with its NVVM intrinsics and inline PTX made host
code. The results are checked against references computed here: exactly
for what PTX defines exactly (arithmetic and conversions in each rounding
mode, bit functions, wide multiplication), and within libdevice's
documented maximum errors (CUDA C++ Programming Guide, "Mathematical
Functions") plus the reference's own rounding for the math functions.
"""

import math
import os
import pathlib
import re
from fractions import Fraction

import numpy as np
import pytest

import kiln_cpu

_REPO = pathlib.Path(__file__).resolve().parents[2]
_TABLE = _REPO / "ir" / "libdevice_functions.def"
_NUMPY = {"i16": np.int16, "i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}
_SPELLED = {"Int16": "i16", "Int32": "i32", "Int64": "i64", "Float32": "f32", "Float64": "f64"}
_NUMBA = {"i16": "int16", "i32": "int32", "i64": "int64", "f32": "float32", "f64": "float64"}


def kiln_table():
    """{name: (inputs, returned values)} from ir/libdevice_functions.def."""
    table = {}
    for name, result, parameters in re.findall(r"^LIBDEVICE_FUNCTION\((\w+), (\w+)((?:, \w+)*)\)",
                                               _TABLE.read_text(), re.M):
        parameters = [p for p in parameters.split(", ") if p]
        inputs = [p for p in parameters if not p.startswith("out_")]
        returned = ([_SPELLED[result]] if result != "Void" else []) + [p[4:] for p in parameters
                                                                      if p.startswith("out_")]
        table[name] = (inputs, returned)
    return table


TABLE = kiln_table()


def elementwise_module_source():
    """A kernel `call_<name>` per function: out_k[i] = <k-th returned value>
    of libdevice.<name>(in_0[i], ...)."""
    lines = ["from numba import cuda", "from numba.cuda import libdevice", ""]
    for name, (inputs, returned) in TABLE.items():
        outs = [f"r{k}" for k in range(len(returned))]
        ins = [f"a{k}" for k in range(len(inputs))]
        signature = ", ".join(f"{_NUMBA[t]}[::1]" for t in returned + inputs)
        lines += [f'@cuda.jit("void({signature})")',
                  f"def call_{name}({', '.join(outs + ins)}):",
                  "    i = cuda.grid(1)",
                  "    if i < r0.size:",
                  f"        {', '.join(o + '[i]' for o in outs)} = libdevice.{name}("
                  f"{', '.join(a + '[i]' for a in ins)})",
                  ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return kiln_cpu.compile_source(elementwise_module_source(), tmp_path_factory.mktemp("libdevice"),
                                   name="every_libdevice_function")


def run(built, name, *inputs):
    """libdevice.<name> applied to the inputs on the CPU engine: one array per returned value."""
    kinds, returned = TABLE[name]
    inputs = [np.ascontiguousarray(np.asarray(x).astype(_NUMPY[kind], copy=False))
              for x, kind in zip(inputs, kinds)]
    size = len(inputs[0]) if inputs else 1
    outputs = [np.zeros(size, _NUMPY[kind]) for kind in returned]
    getattr(built, f"call_{name}")[(size + 63) // 64, 64](*outputs, *inputs)
    return outputs if len(outputs) > 1 else outputs[0]


# --- the table ------------------------------------------------------------


def test_the_table_is_numba_cudas():
    libdevicefuncs = pytest.importorskip("numba.cuda.libdevicefuncs")
    spelled = {"int16": "i16", "int32": "i32", "int64": "i64", "float32": "f32", "float64": "f64"}
    numba = {}
    for symbol, (result, arguments) in libdevicefuncs.functions.items():
        inputs = [spelled[str(a.ty)] for a in arguments if not a.is_ptr]
        returned = ([] if str(result) == "none" else [spelled[str(result)]]) + [
            spelled[str(a.ty)] for a in arguments if a.is_ptr]
        numba[symbol[len("__nv_"):]] = (inputs, returned)
    assert len(numba) > 300, "numba-cuda's libdevice table was not read"
    differing = sorted(name for name in numba.keys() | TABLE.keys() if numba.get(name) != TABLE.get(name))
    assert not differing, {name: (TABLE.get(name), numba.get(name)) for name in differing[:10]}


def test_host_stand_ins_name_every_function_and_refuse_host_calls():
    from kiln.cuda import libdevice
    from kiln.cuda.kernel_language import KernelLanguageError

    assert sorted(libdevice.__all__) == sorted(TABLE)
    with pytest.raises(KernelLanguageError, match=r"cuda\.libdevice\.sincos\(\) is part of the kernel language"):
        libdevice.sincos(1.0)


# --- every function compiles and runs -------------------------------------


def test_every_function_assembles_with_ptxas(tmp_path, kiln):
    source = tmp_path / "every_libdevice_function.py"
    source.write_text(elementwise_module_source())
    built = kiln("build", source, "--emit", "fatbin", "--arch", "75,90,100-real", "-o", tmp_path / "out",
                 "--no-cache")
    assert built.returncode == 0, built.stderr[-3000:]


def test_every_function_runs_on_the_cpu_engine(built):
    samples = {"i16": [15360, -1, 0], "i32": [3, -7, 0], "i64": [3, -(1 << 40), 0],
               "f32": [0.75, -2.5, 0.0], "f64": [0.75, -2.5, 0.0]}
    for name, (inputs, returned) in TABLE.items():
        results = run(built, name, *(samples[kind] for kind in inputs))
        for result in results if len(returned) > 1 else [results]:
            assert len(result) == 3, name


# --- exact results: rounding modes -----------------------------------------


def rounded(exact, dtype, mode):
    """`exact` (a Fraction) rounded to `dtype` to nearest-even ("rn"), toward
    zero ("rz"), down ("rd") or up ("ru")."""
    if exact == 0:
        return dtype(0)
    up, down = dtype(np.inf), dtype(-np.inf)
    below = dtype(float(exact))
    while Fraction(float(below)) > exact:
        below = np.nextafter(below, down)
    while Fraction(float(np.nextafter(below, up))) <= exact:
        below = np.nextafter(below, up)
    above = below if Fraction(float(below)) == exact else np.nextafter(below, up)
    if mode == "rd" or (mode == "rz" and exact > 0):
        return below
    if mode == "ru" or mode == "rz":
        return above
    below_distance, above_distance = exact - Fraction(float(below)), Fraction(float(above)) - exact
    if below_distance != above_distance:
        return below if below_distance < above_distance else above
    bits = np.int32 if dtype == np.float32 else np.int64
    return below if np.array(below).view(bits) % 2 == 0 else above


def random_floats(rng, dtype, count, positive=False):
    values = rng.uniform(1, 2, count) * np.exp2(rng.integers(-20, 20, count).astype(float))
    if not positive:
        values *= rng.choice([-1.0, 1.0], count)
    return values.astype(dtype)


ARITHMETIC = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


def rounded_root(x, dtype, mode):
    """The square root of `x` (a float) rounded to `dtype` in `mode`."""
    square = Fraction(float(x))
    up, down = dtype(np.inf), dtype(-np.inf)
    below = dtype(math.sqrt(float(x)))
    while Fraction(float(below)) ** 2 > square:
        below = np.nextafter(below, down)
    while Fraction(float(np.nextafter(below, up))) ** 2 <= square:
        below = np.nextafter(below, up)
    above = below if Fraction(float(below)) ** 2 == square else np.nextafter(below, up)
    if mode in ("rd", "rz"):
        return below
    if mode == "ru":
        return above
    # No midpoint between two floats is the root of a float of their format.
    return below if square < ((Fraction(float(below)) + Fraction(float(above))) / 2) ** 2 else above


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
@pytest.mark.parametrize("prefix,dtype", [("f", np.float32), ("d", np.float64)])
def test_arithmetic_rounds_in_every_mode(built, prefix, dtype, mode):
    rng = np.random.default_rng(7)
    a, b, c = (random_floats(rng, dtype, 200) for _ in range(3))
    single = dtype == np.float32
    exact = lambda x: Fraction(float(x))  # noqa: E731
    checks = {f"{prefix}{op}_{mode}": ((a, b), lambda i, op=op: rounded(
        ARITHMETIC[op](exact(a[i]), exact(b[i])), dtype, mode)) for op in ARITHMETIC}
    checks[f"{'fmaf' if single else 'fma'}_{mode}"] = (
        (a, b, c), lambda i: rounded(exact(a[i]) * exact(b[i]) + exact(c[i]), dtype, mode))
    checks[f"{prefix}rcp_{mode}"] = ((a,), lambda i: rounded(1 / exact(a[i]), dtype, mode))
    checks[f"{prefix}sqrt_{mode}"] = ((np.abs(a),), lambda i: rounded_root(abs(a[i]), dtype, mode))
    # Numba has no dsub_*: libdevice's dsub functions came later.
    checks = {name: check for name, check in checks.items() if name in TABLE}
    for name, (inputs, expected) in checks.items():
        got = run(built, name, *inputs)
        for i in range(len(got)):
            assert got[i] == expected(i), \
                f"{name}{tuple(float(x[i]) for x in inputs)} = {got[i]!r}, not {expected(i)!r}"


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
def test_conversions_round_in_every_mode_and_saturate(built, mode):
    rng = np.random.default_rng(11)
    doubles = np.concatenate([rng.normal(0, 1e6, 100), np.arange(-4.5, 5, 0.5), [1e12, -1e12, 3e9, np.nan]])
    integral = {"rn": lambda x: round(Fraction(x)), "rz": math.trunc, "rd": math.floor, "ru": math.ceil}[mode]
    for source, dtype in (("double", np.float64), ("float", np.float32)):
        values = doubles.astype(dtype)
        for target, (low, high, bits) in {"int": (-2**31, 2**31 - 1, 32), "uint": (0, 2**32 - 1, 32),
                                          "ll": (-2**63, 2**63 - 1, 64), "ull": (0, 2**64 - 1, 64)}.items():
            name = f"{source}2{target}_{mode}"
            got = run(built, name, values)
            for x, y in zip(values, got):
                expected = 0 if np.isnan(x) else min(max(integral(float(x)), low), high)
                wrapped = (expected + 2**(bits - 1)) % 2**bits - 2**(bits - 1)  # Numba types them signed
                assert int(y) == wrapped, f"{name}({x!r}) = {y}, not {expected}"
    narrowed = run(built, f"double2float_{mode}", doubles[:-1])
    for x, y in zip(doubles[:-1], narrowed):
        assert y == rounded(Fraction(float(x)), np.float32, mode), (mode, x, y)
    big = rng.integers(-2**62, 2**62, 100)
    for name, values, dtype, unsigned_bits in (
            (f"int2float_{mode}", big >> 31, np.float32, 0), (f"uint2float_{mode}", big >> 31, np.float32, 32),
            (f"ll2float_{mode}", big, np.float32, 0), (f"ull2float_{mode}", big, np.float32, 64),
            (f"ll2double_{mode}", big * 3, np.float64, 0), (f"ull2double_{mode}", big * 3, np.float64, 64)):
        got = run(built, name, values)
        for x, y in zip(run_inputs := np.asarray(values), got):
            value = int(x) % 2**unsigned_bits if unsigned_bits else int(x)
            if name.startswith(("int", "uint")):
                value = int(np.int32(x)) % 2**32 if unsigned_bits else int(np.int32(x))
            assert y == rounded(Fraction(value), dtype, mode), (name, int(x), y)


# --- exact results: bits and integers --------------------------------------


def test_bit_and_integer_functions(built):
    rng = np.random.default_rng(3)
    i32 = np.concatenate([rng.integers(-2**31, 2**31, 200), [0, -1, 1, -2**31, 2**31 - 1]]).astype(np.int32)
    j32 = np.roll(i32, 7)
    k32 = np.roll(i32, 13)
    i64 = np.concatenate([rng.integers(-2**63, 2**63, 200, dtype=np.int64), [0, -1, 1, -2**63]]).astype(np.int64)
    j64 = np.roll(i64, 5)
    u32 = lambda x: int(x) % 2**32  # noqa: E731
    u64 = lambda x: int(x) % 2**64  # noqa: E731
    s32 = lambda x: (x + 2**31) % 2**32 - 2**31  # noqa: E731
    s64 = lambda x: (x + 2**63) % 2**64 - 2**63  # noqa: E731

    def byte_perm(x, y, s):
        data = (u32(y) << 32) | u32(x)
        return s32(sum(((data >> (8 * ((u32(s) >> (4 * n)) & 7))) & 0xff) << (8 * n) for n in range(4)))

    checks = {
        "brev": ((i32,), lambda x: s32(int(f"{u32(x):032b}"[::-1], 2))),
        "brevll": ((i64,), lambda x: s64(int(f"{u64(x):064b}"[::-1], 2))),
        "clz": ((i32,), lambda x: 32 - u32(x).bit_length()),
        "clzll": ((i64,), lambda x: 64 - u64(x).bit_length()),
        "ffs": ((i32,), lambda x: (u32(x) & -u32(x)).bit_length()),
        "ffsll": ((i64,), lambda x: (u64(x) & -u64(x)).bit_length()),
        "popc": ((i32,), lambda x: bin(u32(x)).count("1")),
        "popcll": ((i64,), lambda x: bin(u64(x)).count("1")),
        "byte_perm": ((i32, j32, k32), byte_perm),
        "mulhi": ((i32, j32), lambda x, y: (int(x) * int(y)) >> 32),
        "umulhi": ((i32, j32), lambda x, y: s32((u32(x) * u32(y)) >> 32)),
        "mul64hi": ((i64, j64), lambda x, y: (int(x) * int(y)) >> 64),
        "umul64hi": ((i64, j64), lambda x, y: s64((u64(x) * u64(y)) >> 64)),
        "sad": ((i32, j32, k32), lambda x, y, z: s32(int(z) + abs(int(x) - int(y)))),
        "usad": ((i32, j32, k32), lambda x, y, z: s32(u32(z) + abs(u32(x) - u32(y)))),
        "hadd": ((i32, j32), lambda x, y: (int(x) + int(y)) >> 1),
        "rhadd": ((i32, j32), lambda x, y: (int(x) + int(y) + 1) >> 1),
        "uhadd": ((i32, j32), lambda x, y: s32((u32(x) + u32(y)) >> 1)),
        "urhadd": ((i32, j32), lambda x, y: s32((u32(x) + u32(y) + 1) >> 1)),
        "double2hiint": ((i64.view(np.float64),), lambda x: s32(u64(np.float64(x).view(np.int64)) >> 32)),
        "double2loint": ((i64.view(np.float64),), lambda x: s32(u64(np.float64(x).view(np.int64)))),
        "hiloint2double": ((i32, j32), lambda hi, lo: np.int64(s64((u32(hi) << 32) | u32(lo))).view(np.float64)),
        "float_as_int": ((i32.view(np.float32),), lambda x: int(np.float32(x).view(np.int32))),
        "longlong_as_double": ((i64,), lambda x: np.int64(x).view(np.float64)),
    }
    for name, (inputs, reference) in checks.items():
        got = run(built, name, *inputs)
        for i in range(len(got)):
            expected = reference(*(x[i] for x in inputs))
            same = (np.isnan(got[i]) and np.isnan(expected)) if isinstance(got[i], np.floating) and np.isnan(expected) \
                else got[i] == expected
            if isinstance(got[i], np.floating) and not np.isnan(expected):
                same = np.array(got[i]).view(np.int64) == np.array(expected).view(np.int64)
            assert same, f"{name}{tuple(int(x[i]) if x.dtype.kind == 'i' else x[i] for x in inputs)} = {got[i]}, not {expected}"


def test_half_conversions_round_to_nearest_even(built):
    values = np.array([1.0, 1.0 + 2**-11, 1.0 + 3 * 2**-11, 65504.0, 65520.0, 2**-24, 2**-26, -0.0, np.inf, -3.14159],
                      np.float32)
    with np.errstate(over="ignore"):  # 65520 rounds to infinity, as it should
        expected = values.astype(np.float16)
    halves = run(built, "float2half_rn", values)
    assert list(halves) == list(expected.view(np.int16))
    back = run(built, "half2float", halves)
    assert list(back) == list(expected.astype(np.float32))


# --- math functions within libdevice's error bounds ------------------------

# (libdevice name of the float64 function, reference on float64s, ulps in
# float64, ulps in float32): the guide's maximum errors, plus one ulp in
# float32 for rounding the double reference, and arguments in each
# function's ordinary domain.
MATH = [
    ("sin", np.sin, 2, 3, (-1e3, 1e3)),
    ("cos", np.cos, 2, 3, (-1e3, 1e3)),
    ("tan", np.tan, 2, 5, (-1.5, 1.5)),
    ("asin", np.arcsin, 2, 3, (-1, 1)),
    ("acos", np.arccos, 2, 3, (-1, 1)),
    ("atan", np.arctan, 2, 3, (-1e3, 1e3)),
    ("sinh", np.sinh, 2, 4, (-20, 20)),
    ("cosh", np.cosh, 1, 3, (-20, 20)),
    ("tanh", np.tanh, 1, 3, (-5, 5)),
    ("asinh", np.arcsinh, 3, 4, (-1e3, 1e3)),
    ("acosh", np.arccosh, 3, 5, (1, 1e3)),
    ("atanh", np.arctanh, 2, 4, (-0.99, 0.99)),
    ("exp", np.exp, 1, 3, (-80, 80)),
    ("exp2", np.exp2, 1, 3, (-100, 100)),
    ("exp10", lambda x: 10.0 ** x, 1, 3, (-30, 30)),
    ("expm1", np.expm1, 1, 2, (-5, 5)),
    ("log", np.log, 1, 2, (1e-3, 1e6)),
    ("log2", np.log2, 1, 2, (1e-3, 1e6)),
    ("log10", np.log10, 1, 3, (1e-3, 1e6)),
    ("log1p", np.log1p, 1, 2, (-0.9, 1e3)),
    ("cbrt", np.cbrt, 1, 2, (-1e6, 1e6)),
    ("erf", np.vectorize(math.erf), 2, 3, (-3, 3)),
    ("erfc", np.vectorize(math.erfc), 5, 5, (-3, 5)),
    ("tgamma", np.vectorize(math.gamma), 10, 9, (0.5, 20)),
    ("sqrt", np.sqrt, 0, 1, (0, 1e6)),
]


@pytest.mark.parametrize("name,reference,ulps64,ulps32,domain", MATH, ids=[m[0] for m in MATH])
def test_math_functions_are_within_libdevices_error_bounds(built, name, reference, ulps64, ulps32, domain):
    rng = np.random.default_rng(5)
    x = rng.uniform(*domain, 300)
    for suffix, dtype, ulps in (("", np.float64, ulps64), ("f", np.float32, ulps32)):
        values = x.astype(dtype)
        expected = reference(values.astype(np.float64)).astype(dtype)
        got = run(built, name + suffix, values)
        error = np.abs(got.astype(np.float64) - expected) / np.spacing(np.abs(expected).astype(dtype)).astype(np.float64)
        worst = int(np.argmax(error))
        assert error[worst] <= max(ulps, 0.5), (f"{name}{suffix}({values[worst]!r}) = {got[worst]!r}, "
                                                f"expected {expected[worst]!r}: {error[worst]:.1f} ulps")


def test_trigonometry_reduces_huge_arguments(built):
    # Arguments beyond 2**20 (float32) and 2**31 (float64) take libdevice's
    # Payne-Hanek reduction, whose wide carry chains are inline PTX.
    doubles = np.array([1e22, 2.0**60 + 3, 1e300, 5e15, -7e200])
    sines = run(built, "sin", doubles)
    assert np.all(np.abs(sines - np.sin(doubles)) <= 2 * np.spacing(np.abs(np.sin(doubles)))), sines
    floats = np.array([1e20, 3e7, 2.0**100, -9e30], np.float32)
    expected = np.cos(floats.astype(np.float64)).astype(np.float32)
    cosines = run(built, "cosf", floats)
    assert np.all(np.abs(cosines - expected) <= 3 * np.spacing(np.abs(expected))), (cosines, expected)


def test_functions_with_several_results(built):
    x = np.array([0.5, 2.0, -3.25, 1e-300, 1e300])
    sines, cosines = run(built, "sincos", x)
    assert np.all(sines == run(built, "sin", x)) and np.all(cosines == run(built, "cos", x))
    fractions, exponents = run(built, "frexp", x)
    assert list(fractions) == list(np.frexp(x)[0]) and list(exponents) == list(np.frexp(x)[1])
    fractional, integral = run(built, "modf", x)
    assert list(fractional) == list(np.modf(x)[0]) and list(integral) == list(np.modf(x)[1])
    remainders, quotients = run(built, "remquo", np.array([7.0, -7.5, 10.0]), np.array([2.0, 2.0, 3.0]))
    assert list(remainders) == [math.remainder(7.0, 2.0), math.remainder(-7.5, 2.0), math.remainder(10.0, 3.0)]
    assert [q % 8 for q in quotients] == [round(7.0 / 2.0) % 8, round(-7.5 / 2.0) % 8, round(10.0 / 3.0) % 8]


def test_single_precision_square_roots_are_correctly_rounded_on_gpus(tmp_path, kiln):
    # libdevice's sqrtf, hypotf and norm3df ask __nvvm_reflect whether to
    # round square roots correctly; without fastmath the answer is yes, as
    # with Numba's NVVM options.
    source = tmp_path / "roots.py"
    source.write_text("import math\n"
                      "from numba import cuda\n"
                      "from numba.cuda import libdevice\n\n\n"
                      '@cuda.jit("void(float32[::1], float32, float32)")\n'
                      "def roots(r, a, b):\n"
                      "    r[0] = math.hypot(a, b)\n"
                      "    r[1] = libdevice.sqrtf(a)\n")
    built = kiln("build", source, "--emit", "ptx", "--arch", "80", "-o", tmp_path / "out", "--no-cache")
    assert built.returncode == 0, built.stderr
    [ptx] = (tmp_path / "out").glob("*.ptx")
    text = ptx.read_text()
    assert "sqrt.rn.f32" in text and "sqrt.approx" not in text, text[-2000:]


def test_host_code_that_runs_libdevice_is_cached_per_toolkit(tmp_path):
    # Host code is shared between CUDA toolkits, except where it runs the
    # toolkit's libdevice.
    import sqlite3

    from kiln import _compiler

    source = tmp_path / "calls.py"
    source.write_text("from numba import cuda\n"
                      "from numba.cuda import libdevice\n\n\n"
                      '@cuda.jit("void(float64[::1])")\n'
                      "def with_libdevice(r):\n"
                      "    r[0] = libdevice.sin(r[0])\n\n\n"
                      '@cuda.jit("void(float64[::1])")\n'
                      "def without(r):\n"
                      "    r[0] = r[0] + 1\n")
    other = tmp_path / "other_toolkit"
    other.mkdir()
    for folder in ("bin", "nvvm", "lib64"):
        (other / folder).symlink_to(pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / folder)
    (other / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "13.0.77"}}')
    cache = tmp_path / "cache"
    monkeypatch = pytest.MonkeyPatch()
    for build, toolkit in (("first", None), ("again", None), ("other", other)):
        with monkeypatch.context() as patch:
            if toolkit:
                patch.setenv("CUDA_HOME", str(toolkit))
            _compiler.build_module(str(source), str(tmp_path / build), module_name="calls", cache_dir=str(cache),
                                   host_only=True)
    entries = sqlite3.connect(cache / "index.sqlite").execute("select name from entries where kind = 'host'")
    names = sorted(name for (name,) in entries)
    assert names == ["calls.with_libdevice$0", "calls.with_libdevice$0", "calls.without$0"], names


def test_a_build_without_libdevice_says_which_call_needs_it(tmp_path, monkeypatch):
    from kiln import _compiler

    source = tmp_path / "calls.py"
    source.write_text("from numba import cuda\n"
                      "from numba.cuda import libdevice\n\n\n"
                      '@cuda.jit("void(float64[::1])")\n'
                      "def sine(r):\n"
                      "    r[0] = libdevice.sin(r[0])\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no_toolkit_here"))
    (tmp_path / "no_toolkit_here").mkdir()
    with pytest.raises(_compiler.CompileError, match=r"calls libdevice's '__nv_sin', and this build has no "
                                                     r"libdevice: \$CUDA_HOME is '.*no_toolkit_here', which holds no"):
        _compiler.build_module(str(source), str(tmp_path / "out"), module_name="calls", no_cache=True,
                               host_only=True)
