"""Dispatch of built kernels on the CPU engine: exact matches, Numba's
conversions, layouts, read-only arrays, bad arguments and bad launch
configurations (each a clear error that leaves the caller's arrays
untouched), and 8 threads launching one kernel at once."""

import pathlib
import threading

import numpy as np
import pytest

from kiln import _runtime

CASES = pathlib.Path(__file__).resolve().parent / "dispatch_kernels" / "dispatch_cases.py"


@pytest.fixture(scope="module")
def m(import_built):
    return import_built(CASES, "dispatch_cases")


def test_exact_match_picks_each_signature(m):
    out32 = np.ones(8, np.float32)
    m.scale[1, 8](out32, np.float32(3), np.int32(8))
    assert out32.tolist() == [3.0] * 8
    out64 = np.ones(8, np.float64)
    launch = m.scale[1, 8]
    assert launch.prepare(out64, np.float64(2), np.int64(8)) == 1
    launch(out64, np.float64(2), np.int64(8))
    assert out64.tolist() == [2.0] * 8


def test_python_scalars_convert_by_numba_rules(m):
    # int -> int64, float -> float64: exact for the float64 specialization.
    assert m.scale[1, 8].prepare(np.ones(8), 2.0, 8) == 1
    # float32 array pins the first signature; Python float and int convert
    # (float64 -> float32 and int64 -> int32 are unsafe, allowed as in Numba).
    out = np.ones(8, np.float32)
    assert m.scale[1, 8].prepare(out, 2.5, 8) == 0
    m.scale[1, 8](out, 2.5, 8)
    assert out.tolist() == [2.5] * 8


def test_scalar_kinds(m):
    out = np.zeros(3, np.int64)
    m.flags[1, 1](out, True, 200, np.float16(1.5))
    assert out.tolist() == [1, 200, 6]
    m.flags[1, 1](out, np.bool_(False), np.uint8(7), 0.25)
    assert out.tolist() == [0, 7, 1]
    z = np.zeros(4, np.complex128)
    m.add_complex[1, 4](z, 1 + 2j)
    assert z.tolist() == [1 + 2j] * 4


def test_no_specialization_names_argument_and_lists_signatures(m):
    x = np.ones(8, np.int32)
    before = x.copy()
    with pytest.raises(TypeError) as error:
        m.scale[1, 8](x, 2.0, 8)
    message = str(error.value)
    assert "kernel 'scale' has no specialization for argument types (array(int32, 1d, C), float64, int64)" in message
    assert "compiled: (array(float32, 1d, C), float32, int32), (array(float64, 1d, C), float64, int64)" in message
    assert "argument 1 ('out') of 'scale' is array(int32, 1d, C)" in message
    assert np.array_equal(x, before)


def test_wrong_ndim(m):
    with pytest.raises(TypeError, match=r"argument 1 \('out'\) of 'scale' is array\(float32, 2d, C\)"):
        m.scale[1, 8](np.ones((2, 4), np.float32), 2.0, 8)


def test_layouts(m):
    src = np.arange(16, dtype=np.float32)
    dst = np.zeros(8, np.float32)
    m.copy_any[1, 8](src[::2], dst)  # A accepts strided views
    assert dst.tolist() == src[::2].tolist()
    dst2 = np.zeros(16, np.float32)
    m.copy_any[1, 16](src[::-1], dst2)  # negative strides
    assert dst2.tolist() == src[::-1].tolist()

    c = np.zeros((3, 4), np.float32)
    m.fill_c[(1, 1), (4, 4)](c, 1.0)
    assert c[2, 3] == 1.0 + 203
    f = np.zeros((3, 4), np.float32, order="F")
    m.fill_f[(1, 1), (4, 4)](f, 1.0)
    assert f[2, 3] == 1.0 + 203

    wide = np.zeros((3, 8), np.float32)
    before = wide.copy()
    with pytest.raises(TypeError) as error:
        m.fill_c[(1, 1), (4, 4)](wide[:, ::2], 1.0)
    assert "is a non-contiguous array(float32, 2d, A)" in str(error.value)
    assert "C-contiguous" in str(error.value) and "ascontiguousarray" in str(error.value)
    assert np.array_equal(wide, before)
    with pytest.raises(TypeError, match="Fortran-contiguous"):
        m.fill_f[(1, 1), (4, 4)](np.zeros((3, 4), np.float32), 1.0)


def test_one_dimensional_c_array_is_also_f(m):
    # C-contiguous 1-d arrays are F-contiguous too; an A signature takes both.
    assert m.copy_any[1, 4].prepare(np.ones(4, np.float32), np.ones(4, np.float32)) == 0


def test_readonly_array_never_matches_writable(m):
    x = np.ones(8, np.float32)
    x.setflags(write=False)
    with pytest.raises(TypeError, match="is a read-only array"):
        m.scale[1, 8](x, 2.0, 8)
    assert x.tolist() == [1.0] * 8


def test_none_list_and_other_objects(m):
    out = np.ones(8, np.float32)
    with pytest.raises(TypeError, match=r"argument 1 \('out'\) of 'scale' is None"):
        m.scale[1, 8](None, 2.0, 8)
    with pytest.raises(TypeError, match=r"argument 1 \('out'\) of 'scale' is a list; pass a NumPy array or device array"):
        m.scale[1, 8]([1.0, 2.0], 2.0, 8)
    with pytest.raises(TypeError, match=r"argument 2 \('factor'\) of 'scale' has type 'str'"):
        m.scale[1, 8](out, "2", 8)
    assert out.tolist() == [1.0] * 8


def test_arity(m):
    with pytest.raises(TypeError, match=r"kernel 'scale' takes 3 arguments, but 2 were given"):
        m.scale[1, 8](np.ones(8, np.float32), 2.0)
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        m.scale[1, 8](np.ones(8, np.float32), 2.0, n=8)


@pytest.mark.parametrize(
    "config, error, pattern",
    [
        ((0, 8), ValueError, "griddim 0 has a dimension below 1"),
        ((1, 0), ValueError, "blockdim 0 has a dimension below 1"),
        (((1, 0), 8), ValueError, "griddim"),
        ((1, 2048), ValueError, "blockdim 2048 exceeds the limit 1024"),
        ((1, (32, 32, 2)), ValueError, "2048 threads, more than the 1024"),
        ((1, (1, 1, 65)), ValueError, "exceeds the limit 64 of dimension z"),
        ((1, (1, 1, 1, 1)), ValueError, r"blockdim must be a sequence of 1, 2 or 3 integers, got \[1, 1, 1, 1\]"),
        ((1, 8, 0, 1 << 20), ValueError, "sharedmem"),
        ((1, 8, 0, -1), ValueError, "sharedmem"),
        ((1.5, 8), TypeError, r"griddim must be a sequence of integers, got \[1.5\]"),
        ((1, 8, "stream"), TypeError, "stream"),
    ],
)
def test_bad_launch_configuration(m, config, error, pattern):
    with pytest.raises(error, match=pattern):
        m.scale[config]


def test_single_value_configuration_is_an_error(m):
    with pytest.raises(ValueError, match="launch configuration is kernel"):
        m.scale[8]


def test_static_plus_dynamic_shared_memory_checked_at_dispatch(m):
    data = np.arange(32, dtype=np.float32)
    m.reverse_block[1, 32, 0, 32 * 4](data)
    assert data.tolist() == list(range(31, -1, -1))


def test_launch_without_configuration(m):
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        m.scale(np.ones(8, np.float32), 2.0, 8)


def test_streams_and_launch_attributes(m):
    stream = _runtime.Stream()
    launch = m.scale[(2,), (4, 1), stream, 16]
    assert launch.griddim == (2, 1, 1) and launch.blockdim == (4, 1, 1)
    assert launch.stream == stream.handle and launch.sharedmem == 16
    out = np.ones(8, np.float32)
    launch(out, 2.0, 8)
    m.scale[2, 4, stream.handle](out, 2.0, 8)
    m.scale[2, 4, None](out, 2.0, 8)
    assert out.tolist() == [8.0] * 8


def test_device_arrays(m):
    host = np.arange(8, dtype=np.float32)
    buffer = _runtime.DeviceBuffer(host.nbytes)
    _runtime.copy_to_device(buffer.pointer, host, host.nbytes)
    array = _runtime.DeviceArrayBase((8,), (4,), host.dtype, memoryview(host).format, buffer.pointer, buffer)
    m.scale[1, 8](array, 3.0, 8)
    result = np.empty_like(host)
    _runtime.copy_to_host(result, buffer.pointer, host.nbytes)
    assert result.tolist() == (host * 3).tolist()
    strided = _runtime.DeviceArrayBase((4,), (8,), host.dtype, "f", buffer.pointer, buffer)
    with pytest.raises(TypeError, match="non-contiguous"):
        m.scale[1, 8](strided, 3.0, 8)


def test_kernel_object_api(m):
    assert m.scale.signatures == [
        "(array(float32, 1d, C), float32, int32)",
        "(array(float64, 1d, C), float64, int64)",
    ]
    info = m.scale.info()
    assert [i["signature"] for i in info] == m.scale.signatures
    assert info[0]["entry"].startswith("_kiln_")
    assert "scale" in repr(m.scale)
    out = np.ones(1000, np.float32)
    m.scale.forall(1000)(out, 2.0, 1000)
    assert out.tolist() == [2.0] * 1000
    assert m.scale.forall(1000).griddim == (8, 1, 1)


def test_constants(m):
    assert m.THRESHOLD == 3 and m.NAME == "dispatch" and m.RATIO == 0.5


def test_eight_threads_launch_one_kernel(m):
    errors = []
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(index):
        try:
            barrier.wait()
            for _ in range(50):
                out = np.full(4096, float(index + 1), np.float32)
                m.scale[32, 128](out, np.float32(2), np.int32(4096))
                if not np.all(out == 2 * (index + 1)):
                    raise AssertionError(f"thread {index}: wrong result")
            results[index] = True
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert all(results)
