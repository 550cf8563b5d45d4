"""A kernel (`@cuda.jit` without `device=True`) that device code calls is
compiled as a device function beside it, as Numba compiles it: for the
argument types of each call; launched, it still runs as the kernel it is.
Checked on the CPU engine, and through ptxas for every default
architecture. (A called kernel that returns a value, which no signature
of a kernel allows, is tested where kernels compile on demand.)"""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda


@cuda.jit("void(float64[::1])")
def fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i + 0.5


@cuda.jit("void(float64[::1], int64)")
def bump(a, i):
    if i < a.size:
        a[i] += 1.0
        return
    a[0] = -1.0


@cuda.jit("void(float64[::1], float64[::1])")
def caller(a, b):
    fill(a)
    bump(b, cuda.grid(1))
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("kernel_calls"))


def test_a_called_kernel_runs_as_a_device_function_of_each_call(module):
    a, b = np.zeros(8), np.zeros(8)
    module.caller[1, 8](a, b)
    np.testing.assert_array_equal(a, np.arange(8) + 0.5, err_msg="fill(a) called by each thread")
    np.testing.assert_array_equal(b, np.ones(8), err_msg="bump(b, i) called by each thread")


def test_a_called_kernel_still_launches_as_a_kernel(module):
    a = np.zeros(5)
    module.fill[1, 8](a)
    np.testing.assert_array_equal(a, np.arange(5) + 0.5)


def test_kernels_calling_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 3
