"""raise and assert in kernels on the CPU engine. With debug=True the launch
fails with the exception, named as Numba names it ("ValueError: tid=[z, y,
x] ctaid=[z, y, x]: message"), reported for the lowest thread of the lowest
block that raised; the raising thread stops, the others run on. Without
debug=True, as in Numba, the raising thread just stops and the launch
succeeds. The kernel's debug option decides, wherever the raise is.
"""

import re

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda, float64, int32, void


@cuda.jit(void(int32[::1], int32), debug=True, opt=False)
def raise_value_error(out, bad):
    i = cuda.grid(1)
    if i == bad:
        raise ValueError("bad index")
    out[i] = 1


@cuda.jit(void(int32[::1]), debug=True, opt=False)
def raise_without_message(out):
    i = cuda.grid(1)
    if i >= 3:
        raise IndexError
    out[i] = 1


@cuda.jit(device=True, debug=True, opt=False)
def checked_sqrt(x):
    if x < 0:
        raise ArithmeticError("negative")
    return x ** 0.5


@cuda.jit(void(float64[::1]), debug=True, opt=False)
def raise_in_device_function(x):
    i = cuda.grid(1)
    x[i] = checked_sqrt(x[i])


@cuda.jit(void(int32[::1]), debug=True, opt=False)
def assert_positive(x):
    i = cuda.grid(1)
    assert x[i] > 0, "x must be positive"
    x[i] = -x[i]


@cuda.jit(void(int32[::1]), debug=True, opt=False)
def assert_without_message(x):
    i = cuda.grid(1)
    assert x[i] != 7
    x[i] = 0


@cuda.jit(void(int32[::1]))
def assert_not_checked(x):
    i = cuda.grid(1)
    assert x[i] > 0
    x[i] = 5


@cuda.jit(void(int32[::1], int32[::1]), debug=True, opt=False)
def raise_then_barrier(x, out):
    """Thread 5 raises before the barrier; the others pass it, since a
    thread that stopped counts as arrived."""
    buf = cuda.shared.array(64, int32)
    tid = cuda.threadIdx.x
    if tid == 5:
        raise RuntimeError("thread five")
    buf[tid] = x[tid]
    cuda.syncthreads()
    out[tid] = buf[63 - tid]


@cuda.jit(void(int32[::1]))
def raise_without_debug(out):
    i = cuda.grid(1)
    if i % 3 == 1:
        raise ValueError("not reported")
    out[i] = 1


@cuda.jit(void(int32[::1], int32[::1]))
def raise_without_debug_then_barrier(x, out):
    buf = cuda.shared.array(64, int32)
    tid = cuda.threadIdx.x
    if tid == 5:
        raise RuntimeError("not reported")
    buf[tid] = x[tid]
    cuda.syncthreads()
    out[tid] = buf[63 - tid]


@cuda.jit(device=True)
def plain_device_function(x):
    if x == 2:
        raise ValueError("from a device function without debug")
    return x


@cuda.jit(void(int32[::1]), debug=True, opt=False)
def debug_kernel_plain_device_function(out):
    i = cuda.grid(1)
    out[i] = plain_device_function(i) + 1


@cuda.jit(device=True, debug=True, opt=False)
def debug_device_function(x):
    assert x != 2, "checked, but not reported"
    return x


@cuda.jit(void(int32[::1]))
def plain_kernel_debug_device_function(out):
    i = cuda.grid(1)
    out[i] = debug_device_function(i) + 1


@cuda.jit(void(int32[:, ::1]), debug=True, opt=False)
def raise_in_2d(out):
    x, y = cuda.grid(2)
    if x == 3 and y >= 2:
        raise KeyError("two-d")
    out[y, x] = 1


@cuda.jit(void(float64[::1], int32[::1]), debug=True, opt=False)
def tuple_index_checked(x, out):
    i = cuda.threadIdx.x
    out[i] = x.shape[-i]


@cuda.jit(void(float64[::1], int32[::1]))
def tuple_index_unchecked(x, out):
    i = cuda.threadIdx.x
    out[i] = x.shape[-i]
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("kernel_exceptions"))


def test_raise_reports_class_thread_and_message(m):
    out = np.zeros(256, dtype=np.int32)
    with pytest.raises(ValueError) as error:
        m.raise_value_error[4, 64](out, np.int32(133))
    assert str(error.value) == "tid=[0, 0, 5] ctaid=[0, 0, 2]: bad index"
    expected = np.ones(256, dtype=np.int32)
    expected[133] = 0
    np.testing.assert_array_equal(out, expected,
                                  err_msg="every thread but the raising one must run to the end")


def test_launch_after_a_failed_launch_succeeds(m):
    out = np.zeros(64, dtype=np.int32)
    with pytest.raises(ValueError):
        m.raise_value_error[1, 64](out, np.int32(0))
    out[:] = 0
    m.raise_value_error[1, 64](out, np.int32(-1))
    assert (out == 1).all(), "a launch after one that raised must run normally"


def test_lowest_thread_of_lowest_block_is_reported(m):
    out = np.zeros(640, dtype=np.int32)
    with pytest.raises(IndexError) as error:
        m.raise_without_message[10, 64](out)
    assert str(error.value) == "tid=[0, 0, 3] ctaid=[0, 0, 0]", (
        f"many threads raise: the first one must be reported, got {error.value}"
    )
    np.testing.assert_array_equal(out[:3], 1)
    np.testing.assert_array_equal(out[3:], 0)


def test_raise_in_device_function(m):
    x = np.array([4.0, 9.0, -1.0, 16.0])
    with pytest.raises(ArithmeticError) as error:
        m.raise_in_device_function[1, 4](x)
    assert str(error.value) == "tid=[0, 0, 2] ctaid=[0, 0, 0]: negative"
    np.testing.assert_array_equal(x, [2.0, 3.0, -1.0, 4.0])


def test_assert_with_debug(m):
    x = np.array([1, 2, 0, 4], dtype=np.int32)
    with pytest.raises(AssertionError) as error:
        m.assert_positive[1, 4](x)
    assert str(error.value) == "tid=[0, 0, 2] ctaid=[0, 0, 0]: x must be positive"
    np.testing.assert_array_equal(x, [-1, -2, 0, -4])


def test_assert_without_message(m):
    x = np.array([1, 7, 3], dtype=np.int32)
    with pytest.raises(AssertionError) as error:
        m.assert_without_message[1, 3](x)
    assert re.fullmatch(r"tid=\[0, 0, 1\] ctaid=\[0, 0, 0\]", str(error.value)), (
        f"an assert without a message: {error.value}"
    )


def test_assert_without_debug_is_not_checked(m):
    x = np.array([1, -2, 0], dtype=np.int32)
    m.assert_not_checked[1, 3](x)
    np.testing.assert_array_equal(x, [5, 5, 5], err_msg="asserts are checked only with debug=True")


def test_raise_before_barrier_lets_others_pass(m):
    x = np.arange(64, dtype=np.int32)
    out = np.full(64, -1, dtype=np.int32)
    with pytest.raises(RuntimeError) as error:
        m.raise_then_barrier[1, 64](x, out)
    assert str(error.value) == "tid=[0, 0, 5] ctaid=[0, 0, 0]: thread five"
    expected = x[::-1].copy()
    expected[58] = 0  # read buf[5], which thread 5 never wrote (shared memory starts zeroed)
    expected[5] = -1
    np.testing.assert_array_equal(out, expected, err_msg="threads after the barrier")


def test_raise_in_2d_block_names_z_y_x(m):
    out = np.zeros((8, 8), dtype=np.int32)
    with pytest.raises(KeyError) as error:
        m.raise_in_2d[(2, 2), (4, 4)](out)
    assert error.value.args[0] == "tid=[0, 2, 3] ctaid=[0, 0, 0]: two-d"


def test_raise_without_debug_ends_the_thread_silently(m):
    out = np.zeros(300, dtype=np.int32)
    m.raise_without_debug[3, 100](out)
    np.testing.assert_array_equal(out, (np.arange(300) % 3 != 1).astype(np.int32),
                                  err_msg="without debug=True a raise ends its thread, unreported")


def test_raise_without_debug_before_barrier(m):
    x = np.arange(64, dtype=np.int32)
    out = np.full(64, -1, dtype=np.int32)
    m.raise_without_debug_then_barrier[1, 64](x, out)
    expected = x[::-1].copy()
    expected[58] = 0
    expected[5] = -1
    np.testing.assert_array_equal(out, expected, err_msg="threads after the barrier")


def test_kernel_debug_reports_raise_in_plain_device_function(m):
    out = np.zeros(4, dtype=np.int32)
    with pytest.raises(ValueError) as error:
        m.debug_kernel_plain_device_function[1, 4](out)
    assert str(error.value) == (
        "tid=[0, 0, 2] ctaid=[0, 0, 0]: from a device function without debug")
    np.testing.assert_array_equal(out, [1, 2, 0, 4])


def test_plain_kernel_does_not_report_assert_of_debug_device_function(m):
    out = np.zeros(4, dtype=np.int32)
    m.plain_kernel_debug_device_function[1, 4](out)
    np.testing.assert_array_equal(out, [1, 2, 0, 4],
                                  err_msg="the failed assert ends the thread, unreported")


def test_a_tuple_index_out_of_range_raises_index_error(m):
    x = np.zeros(5)
    out = np.full(3, -1, dtype=np.int32)
    with pytest.raises(IndexError) as error:
        m.tuple_index_checked[1, 3](x, out)
    assert str(error.value) == "tid=[0, 0, 2] ctaid=[0, 0, 0]: tuple index out of range"
    np.testing.assert_array_equal(out, [5, 5, -1])
    # Without debug=True the thread stops, reading nothing out of range.
    out = np.full(3, -1, dtype=np.int32)
    m.tuple_index_unchecked[1, 3](x, out)
    np.testing.assert_array_equal(out, [5, 5, -1])
