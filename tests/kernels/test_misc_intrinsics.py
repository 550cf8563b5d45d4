"""The remaining numba.cuda intrinsics on the CPU engine: memory fences
(with the last-block-done reduction that needs them), nanosleep (including a
thread polling a flag another thread of its block sets), bit operations
(popc, brev, clz, ffs), fma, cbrt, selp, and cuda.fp16.
"""

import os
import pathlib
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

import kiln_cpu

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
SELP = ["int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]


def sigs(pattern, dtypes):
    return "[" + ", ".join(repr(pattern.replace("T", t)) for t in dtypes) + "]"


SOURCE = f'''
from numba import cuda, float32, float64, int32, int64, uint32, uint64, void

BLOCK = 64


@cuda.jit(void(float64[::1], float64[::1], uint32[::1], float64[::1]))
def last_block_sums(x, partial, done, total):
    """Each block stores its sum, fences, and takes a ticket; the block that
    gets the last ticket adds up every block's sum (CUDA's
    threadFenceReduction sample)."""
    cache = cuda.shared.array(BLOCK, float64)
    last = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    cache[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    if tid == 0:
        s = 0.0
        for k in range(BLOCK):
            s += cache[k]
        partial[cuda.blockIdx.x] = s
        cuda.threadfence()
        ticket = cuda.atomic.inc(done, 0, cuda.gridDim.x)
        last[0] = 1 if ticket == cuda.gridDim.x - 1 else 0
    cuda.syncthreads()
    if last[0] == 1 and tid == 0:
        s = 0.0
        for b in range(cuda.gridDim.x):
            s += partial[b]
        total[0] = s
        done[0] = 0


@cuda.jit(void(int32[::1]))
def fences(out):
    i = cuda.grid(1)
    out[i] = 1
    cuda.threadfence_block()
    out[i] += 1
    cuda.threadfence()
    out[i] += 1
    cuda.threadfence_system()
    out[i] += 1


@cuda.jit(void(int32[::1], int32[::1]))
def poll_flag(flag, out):
    """Every thread but the last of the block waits, sleeping, until the
    last one raises the block's flag."""
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
    if tid == cuda.blockDim.x - 1:
        out[cuda.grid(1)] = 7
        cuda.threadfence()
        cuda.atomic.exch(flag, b, 1)
    else:
        while cuda.atomic.add(flag, b, 0) == 0:
            cuda.nanosleep(100)
        out[cuda.grid(1)] = out[b * cuda.blockDim.x + cuda.blockDim.x - 1] + tid


@cuda.jit(void(int32[::1], uint32))
def sleep_only(out, ns):
    cuda.nanosleep(ns)
    out[cuda.grid(1)] = 1


@cuda.jit({sigs("void(T[::1], T[::1], T[::1], uint32[::1])", INTS)})
def bits(x, popc, clz, ffs):
    i = cuda.grid(1)
    if i < x.size:
        popc[i] = cuda.popc(x[i])
        clz[i] = cuda.clz(x[i])
        ffs[i] = cuda.ffs(x[i])


@cuda.jit({sigs("void(T[::1], T[::1])", ["uint32", "uint64"])})
def brev(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.brev(x[i])


@cuda.jit({sigs("void(T[::1], T[::1], T[::1], T[::1], T[::1])", ["float32", "float64"])})
def fma_cbrt(a, b, c, fma, cbrt):
    i = cuda.grid(1)
    if i < a.size:
        fma[i] = cuda.fma(a[i], b[i], c[i])
        cbrt[i] = cuda.cbrt(a[i])


@cuda.jit({sigs("void(int32[::1], T[::1], T[::1], T[::1])", SELP)})
def selp(cond, a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = cuda.selp(cond[i] > 0, a[i], b[i])
'''

FP16 = '''
from numba import cuda, float16, float32, float64, int32, int64, void
from numba.cuda import fp16


@cuda.jit(void(float16[::1], float16[::1], float16[::1], float16[:, ::1]))
def arithmetic(a, b, c, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = fp16.hadd(a[i], b[i])
        out[i, 1] = fp16.hsub(a[i], b[i])
        out[i, 2] = fp16.hmul(a[i], b[i])
        out[i, 3] = fp16.hdiv(a[i], b[i])
        out[i, 4] = fp16.hfma(a[i], b[i], c[i])
        out[i, 5] = fp16.hneg(a[i])
        out[i, 6] = fp16.habs(a[i])
        out[i, 7] = fp16.hmax(a[i], b[i])
        out[i, 8] = fp16.hmin(a[i], b[i])


@cuda.jit(void(float16[::1], float16[:, ::1]))
def functions(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = fp16.hsqrt(a[i])
        out[i, 1] = fp16.hrsqrt(a[i])
        out[i, 2] = fp16.hceil(a[i])
        out[i, 3] = fp16.hfloor(a[i])
        out[i, 4] = fp16.htrunc(a[i])
        out[i, 5] = fp16.hrint(a[i])
        out[i, 6] = fp16.hrcp(a[i])
        out[i, 7] = fp16.hexp(a[i])
        out[i, 8] = fp16.hlog(a[i])
        out[i, 9] = fp16.hsin(a[i])
        out[i, 10] = fp16.hcos(a[i])
        out[i, 11] = fp16.hexp2(a[i])
        out[i, 12] = fp16.hlog2(a[i])
        out[i, 13] = fp16.hexp10(a[i])
        out[i, 14] = fp16.hlog10(a[i])


@cuda.jit(void(float16[::1], float16[::1], int32[:, ::1]))
def comparisons(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = fp16.heq(a[i], b[i])
        out[i, 1] = fp16.hne(a[i], b[i])
        out[i, 2] = fp16.hgt(a[i], b[i])
        out[i, 3] = fp16.hge(a[i], b[i])
        out[i, 4] = fp16.hlt(a[i], b[i])
        out[i, 5] = fp16.hle(a[i], b[i])


@cuda.jit(void(float16[::1], float32[::1], float16[::1]))
def mixed(a, f, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = fp16.hadd(a[i], f[i])


@cuda.jit(void(float16))
def show(h):
    print(h)


@cuda.jit(void(float16[::1], float32[::1], float64[::1], int64[::1]))
def widen(h, f, d, n):
    i = cuda.grid(1)
    if i < h.size:
        f[i] = h[i]
        d[i] = h[i]
        n[i] = int64(h[i]) if abs(h[i]) < 60000 else int64(0)


@cuda.jit(void(float32[::1], float64[::1], int64[::1], float16[:, ::1]))
def narrow(f, d, n, out):
    i = cuda.grid(1)
    if i < f.size:
        out[i, 0] = f[i]
        out[i, 1] = d[i]
        out[i, 2] = n[i]
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("misc_intrinsics"))


@pytest.fixture(scope="module")
def half(tmp_path_factory):
    return kiln_cpu.compile_source(FP16, tmp_path_factory.mktemp("fp16"))


# --- fences and nanosleep ---------------------------------------------------


def test_threadfence_last_block_reduction(m):
    blocks = 37
    x = np.random.default_rng(31).integers(-1000, 1000, blocks * 64).astype(np.float64)
    partial = np.zeros(blocks)
    done = np.zeros(1, dtype=np.uint32)
    total = np.zeros(1)
    for _ in range(3):  # the last block resets the counter for the next launch
        total[0] = 0
        m.last_block_sums[blocks, 64](x, partial, done, total)
        assert total[0] == x.sum(), f"last-block reduction gave {total[0]}, expected {x.sum()}"
        assert done[0] == 0, "the last block must have reset the ticket counter"


def test_all_three_fences(m):
    out = np.zeros(256, dtype=np.int32)
    m.fences[4, 64](out)
    assert (out == 4).all(), "threadfence, threadfence_block and threadfence_system"


def test_nanosleep_returns(m):
    out = np.zeros(64, dtype=np.int32)
    m.sleep_only[2, 32](out, np.uint32(1000))
    assert (out == 1).all()


def test_nanosleep_lets_a_polled_flag_be_set(tmp_path):
    # In a child process, so that a thread spinning forever fails the test
    # instead of hanging the suite.
    (tmp_path / "poll.py").write_text(SOURCE)
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import numpy as np
        import kiln_cpu
        m = kiln_cpu.compile_module({str(tmp_path / "poll.py")!r})
        flag = np.zeros(3, dtype=np.int32)
        out = np.zeros(3 * 96, dtype=np.int32)
        m.poll_flag[3, 96](flag, out)
        print(" ".join(map(str, out)))
        """
    )
    try:
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                timeout=60, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        pytest.fail("threads polling a flag with nanosleep never saw the last thread set it")
    assert result.returncode == 0, result.stderr
    out = np.array(result.stdout.split(), dtype=np.int32)
    np.testing.assert_array_equal(out, np.tile(np.append(np.arange(95) + 7, 7), 3),
                                  err_msg="values written after the flag was seen")


# --- bits -------------------------------------------------------------------


def bit_values(dtype):
    info = np.iinfo(dtype)
    bits = info.bits
    values = [0, 1, 2, 3, 5, 0x80, info.max, info.min, info.max // 3, 1 << (bits - 2),
              (1 << (bits - 1)) - 1]
    if info.min < 0:
        values += [-1, -2, -128, info.min + 1]
    else:
        values += [1 << (bits - 1), info.max - 1]
    return np.array(values, dtype=np.int64 if info.min < 0 else np.uint64).astype(dtype)


def unsigned_int(value, bits):
    return int(value) & ((1 << bits) - 1)


@pytest.mark.parametrize("dtype", INTS)
def test_popc_clz_ffs(m, dtype):
    x = bit_values(dtype)
    bits = np.iinfo(dtype).bits
    popc = np.zeros_like(x)
    clz = np.zeros_like(x)
    ffs = np.zeros(x.size, dtype=np.uint32)
    m.bits[1, 32](x, popc, clz, ffs)
    for k, value in enumerate(x):
        u = unsigned_int(value, bits)
        expected = (bin(u).count("1"), bits - u.bit_length(),
                    (u & -u).bit_length())
        got = (int(popc[k]), int(clz[k]), int(ffs[k]))
        assert got == expected, (
            f"{dtype} {value}: (popc, clz, ffs) = {got}, expected {expected}"
        )


@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
def test_brev(m, dtype):
    bits = np.iinfo(dtype).bits
    x = bit_values(dtype)
    out = np.zeros_like(x)
    m.brev[1, 32](x, out)
    for k, value in enumerate(x):
        expected = int(format(int(value), f"0{bits}b")[::-1], 2)
        assert int(out[k]) == expected, f"brev {dtype} {int(value):#x}: {int(out[k]):#x}"


# --- fma / cbrt / selp ------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fma_is_fused_and_cbrt(m, dtype):
    eps = np.finfo(dtype).eps
    # a * b = 1 - eps**2 exactly; unfused, it rounds to 1 and the sum is 0.
    a = np.array([1 + eps, 2.0, -3.0, 27.0, -8.0, 0.0], dtype=dtype)
    b = np.array([1 - eps, 3.0, 0.5, 1.0, 1.0, 5.0], dtype=dtype)
    c = np.array([-1.0, 1.0, 0.25, 0.0, 0.0, -0.0], dtype=dtype)
    fma = np.zeros_like(a)
    cbrt = np.zeros_like(a)
    m.fma_cbrt[1, 32](a, b, c, fma, cbrt)
    exact = [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
             for x, y, z in zip(a, b, c)]
    np.testing.assert_array_equal(fma, np.array(exact, dtype=dtype),
                                  err_msg=f"cuda.fma {dtype} must round once")
    assert fma[0] == -(eps * eps), f"cuda.fma {dtype} is not fused: {fma[0]}"
    # libdevice's and the C library's cbrt are within 1 ulp, not exact.
    np.testing.assert_allclose(cbrt, np.cbrt(a), rtol=2 * eps, err_msg=f"cuda.cbrt {dtype}")


@pytest.mark.parametrize("dtype", SELP)
def test_selp(m, dtype):
    n = 20
    cond = (np.arange(n) % 3 - 1).astype(np.int32)
    a = np.arange(n).astype(dtype) + 1
    b = np.arange(n).astype(dtype) * 2 + 100
    out = np.zeros(n, dtype=dtype)
    m.selp[1, 32](cond, a, b, out)
    np.testing.assert_array_equal(out, np.where(cond > 0, a, b), err_msg=f"cuda.selp {dtype}")


# --- cuda.fp16 --------------------------------------------------------------

F16 = np.float16


def test_fp16_arithmetic(half):
    a = np.array([1.0, 0.1, 65504.0, -2.5, 3.0, 1e-4, np.inf, 0.0], dtype=F16)
    b = np.array([2.0, 0.2, 2.0, 0.5, -7.0, 1e-4, 1.0, -0.0], dtype=F16)
    c = np.array([0.5, 0.3, 0.0, 1.0, 2.0, 0.0, 1.0, 0.0], dtype=F16)
    out = np.zeros((a.size, 9), dtype=F16)
    half.arithmetic[1, 32](a, b, c, out)
    with np.errstate(all="ignore"):
        expected = np.stack([
            a + b, a - b, a * b, a / b,
            (a.astype(np.float64) * b + c).astype(F16),
            -a, np.abs(a), np.fmax(a, b), np.fmin(a, b),
        ], axis=1)
    names = ["hadd", "hsub", "hmul", "hdiv", "hfma", "hneg", "habs", "hmax", "hmin"]
    for k, name in enumerate(names):
        np.testing.assert_array_equal(out[:, k], expected[:, k],
                                      err_msg=f"cuda.fp16.{name} of {a} and {b}")


def test_fp16_functions(half):
    a = np.array([0.25, 1.0, 2.5, 4.0, 9.0, 100.0, 0.5, 3.75], dtype=F16)
    out = np.zeros((a.size, 15), dtype=F16)
    half.functions[1, 32](a, out)
    x = a.astype(np.float64)
    exact_ops = {
        0: ("hsqrt", np.sqrt(x)), 2: ("hceil", np.ceil(x)), 3: ("hfloor", np.floor(x)),
        4: ("htrunc", np.trunc(x)), 5: ("hrint", np.rint(x)),
    }
    for k, (name, expected) in exact_ops.items():
        np.testing.assert_array_equal(out[:, k], expected.astype(F16),
                                      err_msg=f"cuda.fp16.{name} of {a}")
    approximate = {
        1: ("hrsqrt", 1 / np.sqrt(x)), 6: ("hrcp", 1 / x), 7: ("hexp", np.exp(x)),
        8: ("hlog", np.log(x)), 9: ("hsin", np.sin(x)), 10: ("hcos", np.cos(x)),
        11: ("hexp2", np.exp2(x)), 12: ("hlog2", np.log2(x)), 13: ("hexp10", 10.0 ** x),
        14: ("hlog10", np.log10(x)),
    }
    for k, (name, expected) in approximate.items():
        with np.errstate(over="ignore"):
            expected = expected.astype(F16).astype(np.float64)
        got = out[:, k].astype(np.float64)
        close = np.isclose(got, expected, rtol=2e-3, atol=2e-3)
        close |= np.isinf(got) & np.isinf(expected)
        assert close.all(), f"cuda.fp16.{name} of {a}: {got}, expected about {expected}"


def test_fp16_comparisons(half):
    a = np.array([1.0, 2.0, np.nan, 0.0, -1.0], dtype=F16)
    b = np.array([1.0, 1.0, 1.0, -0.0, 3.0], dtype=F16)
    out = np.zeros((a.size, 6), dtype=np.int32)
    half.comparisons[1, 32](a, b, out)
    # cuda_fp16.h: "NaN inputs generate false results", for __hne too,
    # which is not Python's (or NumPy's) !=.
    with np.errstate(invalid="ignore"):
        ordered = ~(np.isnan(a) | np.isnan(b))
        expected = np.stack([a == b, (a != b) & ordered, a > b, a >= b, a < b, a <= b], axis=1)
    np.testing.assert_array_equal(out, expected.astype(np.int32),
                                  err_msg="heq, hne, hgt, hge, hlt, hle (false where an operand is NaN)")


def test_fp16_takes_float32(half):
    a = np.array([1.0, 2.0], dtype=F16)
    f = np.array([0.5, 1e-4], dtype=np.float32)
    out = np.zeros(2, dtype=F16)
    half.mixed[1, 2](a, f, out)
    np.testing.assert_array_equal(out, (a + f.astype(F16)), err_msg="hadd(float16, float32)")


def test_fp16_print(half, capfd):
    half.show[1, 1](F16(0.25))
    assert capfd.readouterr().out == "0.250000\n"


def same_halves(got, expected):
    """Equal bits, except that any NaN matches any NaN of the same sign."""
    g, e = got.view(np.uint16), expected.view(np.uint16)
    nan = np.isnan(expected)
    return np.where(nan, np.isnan(got) & ((g >> 15) == (e >> 15)), g == e)


def test_every_half_widens_exactly(half):
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(F16)
    f = np.zeros(h.size, dtype=np.float32)
    d = np.zeros(h.size)
    n = np.zeros(h.size, dtype=np.int64)
    half.widen[256, 256](h, f, d, n)
    nan = np.isnan(h)
    for name, got, wide in [("float32", f, np.float32), ("float64", d, np.float64)]:
        expected = h.astype(wide)
        bad = ~nan & (got.view(f"u{got.itemsize}") != expected.view(f"u{got.itemsize}"))
        assert not bad.any(), (
            f"float16 -> {name} of {h[bad][:5].view(np.uint16)} (bits) gave {got[bad][:5]}, "
            f"expected {expected[bad][:5]}"
        )
        assert np.isnan(got[nan]).all(), f"float16 NaNs must widen to {name} NaNs"
    finite = np.abs(h.astype(np.float64)) < 60000
    truncated = np.trunc(h[finite].astype(np.float64)).astype(np.int64)
    np.testing.assert_array_equal(n[finite], truncated, err_msg="int64(float16) truncates")


def narrowing_inputs():
    rng = np.random.default_rng(41)
    tiny = np.float64(2.0**-24)
    special = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, -65520.0, 1e6, np.inf, -np.inf,
               np.nan, tiny, tiny / 2, tiny * 0.5000001, tiny * 1.5, tiny * 2.5, tiny * 0.49,
               2.0**-14, 2.0**-14 - tiny / 2, 2.0**-15 + tiny / 2, 1 + 2.0**-11,
               1 + 3 * 2.0**-11, 1 + 2.0**-11 + 2.0**-40, 2049.0, 2051.0, 4097.0, 1e-8, -1e-30]
    ties = (np.arange(1, 2048) * 2 + 1) * 2.0**-11  # halfway between halves in [1, 2)
    spread = rng.standard_normal(20000) * 10.0 ** rng.uniform(-9, 6, 20000)
    return np.concatenate([special, ties, spread, -ties])


def test_narrowing_to_half_rounds_to_nearest_even(half):
    d = narrowing_inputs()
    f = d.astype(np.float32)
    n = np.clip(np.round(np.nan_to_num(d)), -70000, 70000).astype(np.int64)
    out = np.zeros((d.size, 3), dtype=F16)
    with np.errstate(over="ignore"):
        half.narrow[(d.size + 255) // 256, 256](f, d, n, out)
        cases = [("float32", f, f.astype(F16)), ("float64", d, d.astype(F16)),
                 ("int64", n, n.astype(F16))]
    for k, (name, source, expected) in enumerate(cases):
        ok = same_halves(out[:, k], expected)
        assert ok.all(), (
            f"{name} -> float16 of {source[~ok][:4]!r} gave {out[~ok, k][:4]!r}, "
            f"expected {expected[~ok][:4]!r}"
        )
