"""print() in kernels on the CPU engine: the same text numba-cuda's vprintf
formats give on a GPU (integers with %lld/%llu, floats with %f, bools as
True/False, tuples and cuda.threadIdx as Python writes tuples, items
separated by spaces), one whole line per call. The GPU's format strings are
checked in the PTX.
"""

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda, float32, float64, int8, int32, int64, uint8, uint64, void


@cuda.jit(void(int32, int64, uint64, int8, uint8))
def print_integers(a, b, c, d, e):
    print(a, b, c, d, e)


@cuda.jit(void(float32, float64, float64, float64))
def print_floats(a, b, c, d):
    print(a, b, c, d)


@cuda.jit(void(int32))
def print_text(n):
    print("n =", n, "is", n > 2, "100%", "%d %s")
    print()
    print("only text")


@cuda.jit(void(int32[::1]))
def print_per_thread(x):
    i = cuda.grid(1)
    if i < x.size:
        print("thread", cuda.threadIdx.x, "block", cuda.blockIdx.x, "value", x[i])


@cuda.jit(void(int64, float64))
def print_tuples(a, b):
    print((a, b), "and", (a,), (1, (b, True), ()))
    print(("label", 7), cuda.threadIdx, cuda.blockDim)


@cuda.jit(device=True)
def show(v):
    print("device", v)


@cuda.jit(void(int32[::1]))
def print_with_barrier(x):
    tid = cuda.threadIdx.x
    print("before", tid)
    cuda.syncthreads()
    show(x[tid])
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("kernel_print"))


def lines_of(capfd):
    out, _ = capfd.readouterr()
    return out.splitlines()


def test_integers(m, capfd):
    m.print_integers[1, 1](np.int32(-7), -(2**63), np.uint64(2**64 - 1), np.int8(-128),
                           np.uint8(255))
    assert lines_of(capfd) == ["-7 -9223372036854775808 18446744073709551615 -128 255"]


def test_floats_print_with_percent_f_as_on_a_gpu(m, capfd):
    # numba-cuda's printimpl formats every float with "%f".
    m.print_floats[1, 1](np.float32(1.5), 0.1, -2.0e20, 1.0 / 3)
    assert lines_of(capfd) == ["1.500000 0.100000 -200000000000000000000.000000 0.333333"]


def test_float_specials(m, capfd):
    m.print_floats[1, 1](np.float32("inf"), float("-inf"), 1e-9, -0.0)
    assert lines_of(capfd) == ["inf -inf 0.000000 -0.000000"]


def test_text_bools_and_percent_signs(m, capfd):
    m.print_text[1, 1](np.int32(3))
    assert lines_of(capfd) == ["n = 3 is True 100% %d %s", "", "only text"]


def test_one_line_per_thread(m, capfd):
    blocks, threads = 3, 40
    x = np.arange(blocks * threads, dtype=np.int32) * 2
    m.print_per_thread[blocks, threads](x)
    lines = lines_of(capfd)
    expected = [f"thread {t} block {b} value {2 * (b * threads + t)}"
                for b in range(blocks) for t in range(threads)]
    assert sorted(lines) == sorted(expected), "each print() must be one whole line"


def test_print_around_barrier_and_in_device_function(m, capfd):
    threads = 64
    m.print_with_barrier[1, threads](np.arange(threads, dtype=np.int32) + 100)
    lines = lines_of(capfd)
    assert lines[:threads] == [f"before {t}" for t in range(threads)], (
        "every 'before' line must come before the barrier releases anyone"
    )
    assert sorted(lines[threads:]) == sorted(f"device {t + 100}" for t in range(threads))


def test_tuples_print_as_python_writes_them(m, capfd):
    m.print_tuples[1, 2](-5, 0.25)
    assert sorted(lines_of(capfd)) == sorted(
        ["(-5, 0.250000) and (-5,) (1, (0.250000, True), ())"] * 2
        + ["(label, 7) (0, 0, 0) (2, 1, 1)", "(label, 7) (1, 0, 0) (2, 1, 1)"])


def test_the_gpu_prints_a_tuple_with_one_format(tmp_path):
    from kiln import _compiler

    path = tmp_path / "tuple_print.py"
    path.write_text(SOURCE)
    [ir] = [text for (kernel, _, _), text in _compiler.inspect(str(path), "llvm", str(tmp_path / "out"))
            if kernel == "print_tuples"][:1]
    assert "(%lld, %f) and (%lld,) (%lld, (%f, %s), ())\\0A" in ir, ir
