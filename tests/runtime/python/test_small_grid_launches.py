"""Grids of one block (and other small grids) run on the thread that
launches them instead of the CPU engine's workers; nothing a kernel can see
changes: exceptions carry the same class and message, print() lines come
out in thread order before the launch returns, barriers work, and Python
threads that launch at the same time each get their own results."""

import signal
import threading

import numpy as np
import pytest

SOURCE = '''
from kiln import cuda
from numba import int32


@cuda.jit(debug=True, opt=False)
def divide(x, out):
    i = cuda.grid(1)
    out[i] = 10 // x[i]


@cuda.jit
def speak(out):
    i = cuda.threadIdx.x
    print("thread", i, "of block", cuda.blockIdx.x)
    out[cuda.grid(1)] = i


@cuda.jit
def reverse(out):
    s = cuda.shared.array(64, int32)
    i = cuda.threadIdx.x
    s[i] = out[i]
    cuda.syncthreads()
    out[i] = s[cuda.blockDim.x - 1 - i]


@cuda.jit
def count_up(out, n):
    i = 0
    while i < n:
        i += 1
    out[0] = i


@cuda.jit
def scaled(out, factor):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i * factor
'''


@pytest.fixture
def kernels(source_module):
    return source_module("small_grid_kernels", SOURCE)


def test_a_raise_in_the_only_block_fails_the_launch_with_numbas_message(kernels):
    out = np.zeros(4, np.int64)
    with pytest.raises(ZeroDivisionError) as raised:
        kernels.divide[1, 4](np.array([1, 2, 0, 5]), out)
    assert str(raised.value) == "tid=[0, 0, 2] ctaid=[0, 0, 0]: integer division by zero", (
        f"a one-block launch must report the raise as Numba does, got {raised.value!r}")
    kernels.divide[1, 4](np.array([1, 2, 5, 10]), out)
    assert out.tolist() == [10, 5, 2, 1], "the launch after a failed one must run normally"


def test_a_raise_in_block_zero_of_a_small_grid_wins_over_later_blocks(kernels):
    out = np.zeros(8, np.int64)
    with pytest.raises(ZeroDivisionError) as raised:
        kernels.divide[2, 4](np.array([1, 0, 1, 1, 0, 1, 1, 1]), out)
    assert str(raised.value) == "tid=[0, 0, 1] ctaid=[0, 0, 0]: integer division by zero", (
        f"the lowest block's failure must be reported, got {raised.value!r}")


def test_print_lines_come_in_thread_order_before_the_launch_returns(kernels, capfd):
    out = np.zeros(6, np.int64)
    kernels.speak[2, 3](out)
    printed = capfd.readouterr().out.splitlines()
    assert printed == [f"thread {i} of block {b}" for b in range(2) for i in range(3)], (
        f"print() output of a small grid is out of order or missing: {printed}")
    assert out.tolist() == [0, 1, 2, 0, 1, 2]


def test_a_one_block_kernel_with_syncthreads(kernels):
    out = np.arange(64, dtype=np.int32)
    kernels.reverse[1, 64](out)
    assert out.tolist() == list(range(63, -1, -1)), "threads read shared memory before the barrier"


def test_python_threads_launching_at_once_each_get_their_own_results(kernels):
    failures = []

    def launch(factor):
        for _ in range(200):
            out = np.zeros(32, np.int64)
            kernels.scaled[1, 32](out, factor)
            if out.tolist() != [i * factor for i in range(32)]:
                failures.append((factor, out.tolist()))
                return

    threads = [threading.Thread(target=launch, args=(factor,)) for factor in (2, 3, 5, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, f"concurrent one-block launches interfered: {failures[:2]}"


def test_a_long_one_block_launch_polls_for_signals_and_goes_on_when_no_handler_raises(kernels):
    # The launch runs on this thread, which is asked every 20 ms to run
    # Python's signal handlers from inside the kernel's loop; a handler that
    # returns lets the loop go on where it was.
    handled = []
    previous = signal.signal(signal.SIGALRM, lambda *_: handled.append(1))
    signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
    try:
        out = np.zeros(1, np.int64)
        kernels.count_up[1, 1](out, 1_000_000_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert out[0] == 1_000_000_000, f"the loop did not run to its end: {out[0]}"
    assert handled, "the timer's signal never reached its handler"
