"""Kernels with datetime64 and timedelta64 in their signatures
(NPDatetime('D')[::1], NPTimedelta('s')), built ahead of time: run on the
CPU engine against NumPy, assembled by ptxas for every architecture, and
refused with the unit named when the unit is not NumPy's."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda


@cuda.jit("void(NPDatetime('M')[::1], NPDatetime('D')[::1], NPTimedelta('D')[::1])")
def days_between(months, days, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = days[i] - months[i]


@cuda.jit("void(NPDatetime('s')[::1], NPTimedelta('m'), float64, NPDatetime('s')[::1])")
def shifted(times, step, count, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = times[i] + step * count
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("dates"), name="dates")


def test_months_meet_days_through_the_calendar(built):
    months = np.arange("1895-01", "2105-01", dtype="M8[M]")
    days = np.full(months.size, np.datetime64("2000-02-29"), "M8[D]")
    days[::7] = np.datetime64("NaT")
    out = np.zeros(months.size, "m8[D]")
    built.days_between[(months.size + 127) // 128, 128](months, days, out)
    np.testing.assert_array_equal(out, days - months)


def test_scalar_timedeltas_and_floats_scale_into_seconds(built):
    times = np.arange(0, 50, dtype="M8[s]")
    out = np.zeros_like(times)
    built.shifted[1, 64](times, np.timedelta64(3, "m"), 2.5, out)
    # 2.5 times 3 minutes is 7 minutes: the product keeps the unit, as in NumPy
    np.testing.assert_array_equal(out, times + np.timedelta64(3, "m") * 2.5)
    assert out[0] == np.datetime64(420, "s")


def test_every_architecture_assembles_datetime_arithmetic(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 2


def test_a_unit_numpy_lacks_is_named(tmp_path):
    source = 'from numba import cuda\n\n@cuda.jit("void(NPDatetime(\'days\')[::1])")\ndef k(a):\n    pass\n'
    with pytest.raises(kiln_cpu.CompileError, match=r"'days' is not a datetime64 unit: NumPy's are 'Y', 'M'"):
        kiln_cpu.compile_source(source, tmp_path, name="bad_unit")
