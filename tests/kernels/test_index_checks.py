"""Array indices on the CPU engine are checked, as Numba's simulator checks
them: an index outside an array's extent (after counting a negative one
from the end) makes the launch raise IndexError naming the kernel, the
array, the index, the axis, the shape and the source line, instead of
reading or writing memory the array does not own, whatever debug= says.
Every access path is checked: element reads and writes, integer indices of
views, static and dynamic shared arrays, local arrays, atomics, and arrays
nested in records. boundscheck=False runs the kernel's copy without
checks. A build holds the copy each kernel's option asks for; built with
--switchable-index-checks it holds both, and KILN_CPU_BOUNDSCHECK=0 (or
NUMBA_BOUNDSCHECK=0) runs the unchecked copy, =1 the checked one; a
setting that asks for a copy the build lacks warns and runs the one it has.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda, float32, int32, int64, void

@cuda.jit(void(int32[::1], int64, int32[::1]))
def read_1d(a, i, out):
    out[0] = a[i]


@cuda.jit(void(int32[::1], int64))
def write_1d(a, i):
    a[i] = 99


@cuda.jit(void(int32[:, ::1], int64, int64, int32[::1]))
def read_2d(a, i, j, out):
    out[0] = a[i, j]


@cuda.jit(void(int32[:, ::1], int64, int32[::1]))
def row_view(a, i, out):
    row = a[i]
    out[0] = row[0]


@cuda.jit(void(int32[::1], int64, int64, int32[::1]))
def slice_then_index(a, stop, i, out):
    part = a[2:stop]
    out[0] = part[i]


@cuda.jit(void(int64, int32[::1]))
def static_shared(i, out):
    buf = cuda.shared.array(16, int32)
    buf[i] = 5
    out[0] = buf[i]


@cuda.jit(void(int64, int32[::1]))
def dynamic_shared(i, out):
    buf = cuda.shared.array(0, int32)
    buf[i] = 6
    out[0] = buf[i]


@cuda.jit(void(int64, int32[::1]))
def local_array(i, out):
    buf = cuda.local.array(8, int32)
    for k in range(8):
        buf[k] = k
    out[0] = buf[i]


@cuda.jit(void(int32[::1], int64))
def atomic_add(a, i):
    cuda.atomic.add(a, i, 1)


@cuda.jit("void(Record([('v', {'type': NestedArray(int32, (3,)), 'offset': 0})], 12, False)[::1], int64, int32[::1])")
def record_field(points, i, out):
    out[0] = points[0].v[i]


@cuda.jit(device=True)
def fetch(a, i):
    return a[i]


@cuda.jit(void(int32[::1], int64, int32[::1]))
def through_device_function(a, i, out):
    out[0] = fetch(a, i)


@cuda.jit(void(int32[::1], int64, int32[::1]), debug=True, opt=False)
def read_with_debug(a, i, out):
    out[0] = a[i]


@cuda.jit(void(int32[::1], int64, int32[::1]))
def every_thread_reads(a, i, out):
    t = cuda.grid(1)
    out[t] = a[t + i]


@cuda.jit(void(int32[::1], int64, int32[::1]))
def with_barrier(a, i, out):
    t = cuda.threadIdx.x
    cuda.syncthreads()
    out[t] = a[t + i]


@cuda.jit(void(int32[::1], int64, int32[::1]))
def block_3d_reads(a, i, out):
    t = cuda.threadIdx.x + 4 * (cuda.threadIdx.y + 4 * cuda.threadIdx.z)
    out[t] = a[t + i]


@cuda.jit(void(int32[::1], int64, int32[::1]), boundscheck=False)
def unchecked_read(a, i, out):
    out[0] = a[i]
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("index_checks"))


@pytest.fixture(scope="module")
def switchable_module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("switchable_index_checks"),
                                   switchable_index_checks=True)


def source_line(text):
    """The line of SOURCE holding `text` (the file starts with SOURCE)."""
    for number, line in enumerate(SOURCE.splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} is not in SOURCE")


def raises_index_error(launch, *fragments):
    with pytest.raises(IndexError) as error:
        launch()
    message = str(error.value)
    for fragment in fragments:
        assert fragment in message, f"the IndexError must say {fragment!r}, got: {message}"
    return message


def test_read_past_the_end_names_kernel_array_index_shape_and_line(module):
    a = np.arange(10, dtype=np.int32)
    out = np.zeros(1, np.int32)
    message = raises_index_error(
        lambda: module.read_1d[1, 1](a, 10, out),
        "index 10 is out of bounds for axis 0 with size 10",
        "array 'a' of shape (10,)",
        "kernel 'read_1d'",
        f".py:{source_line('out[0] = a[i]')}",
    )
    assert message.startswith("tid=[0, 0, 0] ctaid=[0, 0, 0]: "), (
        f"the message must start as Numba's kernel exceptions do, got: {message}")
    assert out[0] == 0, "the failing thread must not have stored what it read"


def test_write_past_the_end_does_not_touch_the_memory_behind(module):
    backing = np.zeros(16, dtype=np.int32)
    a = backing[:10]
    raises_index_error(lambda: module.write_1d[1, 1](a, 10), "index 10", "kernel 'write_1d'")
    assert (backing == 0).all(), f"an out-of-bounds write reached memory: {backing}"


def test_negative_indices_wrap_once_as_in_numba(module):
    a = np.arange(10, dtype=np.int32)
    out = np.zeros(1, np.int32)
    module.read_1d[1, 1](a, -1, out)
    assert out[0] == 9, "a[-1] must read the last element"
    module.read_1d[1, 1](a, -10, out)
    assert out[0] == 0, "a[-10] of 10 elements must read the first"
    raises_index_error(lambda: module.read_1d[1, 1](a, -11, out),
                       "index -11 is out of bounds for axis 0 with size 10")


def test_each_axis_of_a_2d_array(module):
    a = np.zeros((3, 4), dtype=np.int32)
    out = np.zeros(1, np.int32)
    module.read_2d[1, 1](a, 2, 3, out)
    raises_index_error(lambda: module.read_2d[1, 1](a, 1, 4, out),
                       "index 4 is out of bounds for axis 1 with size 4", "shape (3, 4)")
    raises_index_error(lambda: module.read_2d[1, 1](a, 3, 0, out),
                       "index 3 is out of bounds for axis 0 with size 3")
    # 1 * 4 + 4 is inside the buffer: only a per-axis check catches it.
    raises_index_error(lambda: module.read_2d[1, 1](a, 0, 5, out), "axis 1")


def test_integer_index_of_a_view(module):
    a = np.zeros((3, 4), dtype=np.int32)
    out = np.zeros(1, np.int32)
    raises_index_error(lambda: module.row_view[1, 1](a, 3, out),
                       "index 3 is out of bounds for axis 0 with size 3", "kernel 'row_view'")


def test_slices_clamp_and_their_views_are_checked(module):
    a = np.arange(10, dtype=np.int32)
    out = np.zeros(1, np.int32)
    module.slice_then_index[1, 1](a, 100, 7, out)
    assert out[0] == 9, "a[2:100] must clamp to a[2:10]"
    raises_index_error(lambda: module.slice_then_index[1, 1](a, 5, 3, out),
                       "index 3 is out of bounds for axis 0 with size 3", "a view of array 'a'")


@pytest.mark.parametrize("kernel, what, size", [
    ("static_shared", "a shared array", 16),
    ("local_array", "a local array", 8),
])
def test_shared_and_local_arrays(module, kernel, what, size):
    out = np.zeros(1, np.int32)
    getattr(module, kernel)[1, 1](size - 1, out)
    raises_index_error(lambda: getattr(module, kernel)[1, 1](size, out),
                       f"index {size} is out of bounds", what)


def test_dynamic_shared_array_has_the_launch_size(module):
    out = np.zeros(1, np.int32)
    module.dynamic_shared[1, 1, 0, 40](9, out)
    assert out[0] == 6
    raises_index_error(lambda: module.dynamic_shared[1, 1, 0, 40](10, out),
                       "index 10 is out of bounds for axis 0 with size 10",
                       "the dynamic shared array")


def test_atomics_on_array_elements(module):
    backing = np.zeros(8, dtype=np.int32)
    raises_index_error(lambda: module.atomic_add[1, 1](backing[:4], 4), "index 4", "size 4")
    assert (backing == 0).all(), "the out-of-bounds atomic reached memory"


def test_arrays_nested_in_records(module):
    dtype = np.dtype([("v", np.int32, 3)])
    points = np.zeros(2, dtype)
    points[0]["v"] = [1, 2, 3]
    out = np.zeros(1, np.int32)
    module.record_field[1, 1](points, 2, out)
    assert out[0] == 3
    raises_index_error(lambda: module.record_field[1, 1](points, 3, out),
                       "index 3 is out of bounds", "record field 'v'")


def test_the_line_is_the_device_functions(module):
    a = np.zeros(4, dtype=np.int32)
    out = np.zeros(1, np.int32)
    raises_index_error(lambda: module.through_device_function[1, 1](a, 4, out),
                       "kernel 'through_device_function'", f".py:{source_line('return a[i]')}")


def test_debug_kernels_raise_the_same(module):
    a = np.zeros(4, dtype=np.int32)
    out = np.zeros(1, np.int32)
    raises_index_error(lambda: module.read_with_debug[1, 1](a, 4, out), "index 4", "array 'a'")


@pytest.mark.parametrize("kernel", ["every_thread_reads", "with_barrier"])
def test_lowest_failing_thread_is_reported_and_the_engine_stays_usable(module, kernel):
    a = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    raises_index_error(lambda: getattr(module, kernel)[1, 64](a, 10, out),
                       "tid=[0, 0, 54] ctaid=[0, 0, 0]: index 64 is out of bounds")
    getattr(module, kernel)[1, 64](a, 0, out)
    np.testing.assert_array_equal(out, a, err_msg="a launch after an IndexError must work")


def test_the_failing_thread_of_a_3d_block_is_named_by_all_three_indices(module):
    # Thread (2, 1, 3), linear 54, is the first to read past the end.
    a = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    raises_index_error(lambda: module.block_3d_reads[1, (4, 4, 4)](a, 10, out),
                       "tid=[3, 1, 2] ctaid=[0, 0, 0]: index 64 is out of bounds")
    assert out[:54].tolist() == list(range(10, 64)), "the threads before the failing one must have run"


def test_boundscheck_false_runs_unchecked(module):
    backing = np.arange(16, dtype=np.int32)
    out = np.zeros(1, np.int32)
    module.unchecked_read[1, 1](backing[:10], 10, out)
    assert out[0] == 10, "boundscheck=False must read past the view unchecked, as Numba does"


CHILD = '''
import importlib.util, sys, warnings
import numpy as np
warnings.simplefilter("always")
spec = importlib.util.spec_from_file_location({name!r}, {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
backing = np.arange(16, dtype=np.int32)
out = np.zeros(1, np.int32)
for launch in range(2):
    try:
        module.{kernel}[1, 1](backing[:10], 10, out)
        print("read", int(out[0]))
    except IndexError as error:
        print("IndexError", error)
'''


def run_child(module, kernel, **environment):
    """(what each of two launches did, the warnings printed) in a process
    of its own, which reads the setting in `environment`."""
    code = CHILD.format(name=module.__name__, path=module.__file__, kernel=kernel)
    env = dict(os.environ, KILN_TARGET="cpu", PYTHONPATH=os.pathsep.join(sys.path))
    for key in ("KILN_CPU_BOUNDSCHECK", "NUMBA_BOUNDSCHECK"):
        env.pop(key, None)
    env.update(environment)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, f"the child failed:\n{result.stderr}"
    launches = result.stdout.strip().splitlines()
    assert len(launches) == 2 and launches[0] == launches[1], (
        f"two launches of {kernel} must do the same: {launches}")
    warnings = [line for line in result.stderr.splitlines() if "RuntimeWarning" in line]
    return launches[0], warnings


@pytest.mark.parametrize("environment, kernel, expected", [
    ({}, "read_1d", "IndexError"),
    ({"KILN_CPU_BOUNDSCHECK": "0"}, "read_1d", "read 10"),
    ({"NUMBA_BOUNDSCHECK": "0"}, "read_1d", "read 10"),
    ({"KILN_CPU_BOUNDSCHECK": "1"}, "read_1d", "IndexError"),
    ({"NUMBA_BOUNDSCHECK": "1"}, "unchecked_read", "IndexError"),
    ({"KILN_CPU_BOUNDSCHECK": "1", "NUMBA_BOUNDSCHECK": "0"}, "read_1d", "IndexError"),
])
def test_environment_chooses_the_checked_or_unchecked_copy_of_a_switchable_build(
        switchable_module, environment, kernel, expected):
    output, warnings = run_child(switchable_module, kernel, **environment)
    assert output.startswith(expected), (
        f"{kernel} with {environment or 'no setting'} must give {expected!r}, got: {output}")
    assert not warnings, f"a build with both copies has the one asked for: {warnings}"


def test_a_build_holds_the_copy_each_kernels_option_asks_for(module, switchable_module):
    assert module.read_1d.info()[0]["index_checks"] == "checked"
    assert module.unchecked_read.info()[0]["index_checks"] == "unchecked"
    assert switchable_module.read_1d.info()[0]["index_checks"] == "both"
    assert switchable_module.unchecked_read.info()[0]["index_checks"] == "both"


@pytest.mark.parametrize("environment, kernel, expected, asked", [
    ({"KILN_CPU_BOUNDSCHECK": "0"}, "read_1d", "IndexError", "code without index checks"),
    ({"NUMBA_BOUNDSCHECK": "0"}, "read_1d", "IndexError", "code without index checks"),
    ({"KILN_CPU_BOUNDSCHECK": "1"}, "unchecked_read", "read 10", "index checks"),
])
def test_a_setting_asking_for_a_copy_the_build_lacks_runs_the_other_and_warns_once(
        module, environment, kernel, expected, asked):
    output, warnings = run_child(module, kernel, **environment)
    assert output.startswith(expected), (
        f"{kernel} built with one copy must run it whatever {environment} asks: {output}")
    [setting] = [f"{name}={value}" for name, value in environment.items()]
    assert len(warnings) == 1, f"one warning for two launches of {kernel}, got: {warnings}"
    [warning] = warnings
    for fragment in (setting, f"asks for {asked}", f"kernel '{kernel}'",
                     "--switchable-index-checks"):
        assert fragment in warning, f"the warning must say {fragment!r}: {warning}"


def test_a_setting_that_matches_the_copy_built_does_not_warn(module):
    output, warnings = run_child(module, "read_1d", KILN_CPU_BOUNDSCHECK="1")
    assert output.startswith("IndexError") and not warnings, (output, warnings)
    output, warnings = run_child(module, "unchecked_read", KILN_CPU_BOUNDSCHECK="0")
    assert output == "read 10" and not warnings, (output, warnings)
