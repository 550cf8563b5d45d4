"""Sizes of shared and local arrays are counted in 64 bits from the source
to the launch: a static shared array of 4 GiB or more is the launch's
ValueError about shared memory (never a size wrapped to a small one that
overruns the engine's per-block buffer), and a local array of a negative
or absurd size is a compile-time error, as in Numba.
"""

import numpy as np
import pytest

import kiln_cpu

FOUR_GIB_SHARED = '''
from numba import cuda, int32, void


@cuda.jit(void(int32[::1]))
def four_gib(out):
    buf = cuda.shared.array(1073741824, int32)  # 2**32 bytes
    buf[cuda.threadIdx.x] = 7
    out[0] = buf[0]


@cuda.jit(void(int32[::1]))
def four_gib_and_sixteen(out):
    buf = cuda.shared.array(1073741828, int32)  # 2**32 + 16 bytes
    buf[cuda.threadIdx.x] = 7
    out[0] = buf[0]
'''


@pytest.fixture(scope="module")
def shared_module(tmp_path_factory):
    return kiln_cpu.compile_source(FOUR_GIB_SHARED, tmp_path_factory.mktemp("four_gib_shared"))


@pytest.mark.parametrize("kernel, size", [("four_gib", 2**32), ("four_gib_and_sixteen", 2**32 + 16)])
def test_static_shared_arrays_of_4_gib_are_refused_at_launch(shared_module, kernel, size):
    out = np.zeros(1, np.int32)
    with pytest.raises(ValueError) as error:
        getattr(shared_module, kernel)[1, 32](out)
    message = str(error.value)
    assert f"{size} static bytes" in message and "49152" in message, (
        f"the launch must be refused for its {size} bytes of shared memory, got: {message}")
    assert out[0] == 0, "a refused launch must not run"


@pytest.mark.parametrize("declaration, expected", [
    ("cuda.local.array(-5, float32)",
     "the shape of cuda.local.array must not be negative, got -5"),
    ("cuda.local.array((4, -1), float32)",
     "the shape of cuda.local.array must not be negative, got (4, -1)"),
    ("cuda.shared.array(-1, float32)",
     "the shape of cuda.shared.array must not be negative, got -1"),
    ("cuda.local.array(1048576, float32)",
     "cuda.local.array of shape 1048576 is larger than the 524288 bytes of local memory a "
     "thread can have"),
    ("cuda.local.array((65536, 65536, 65536), float64)", "is larger than the 524288 bytes"),
    ("cuda.shared.array((4294967296, 4294967296), float32)",
     "is larger than the 2**63 - 1 bytes a size can count"),
])
def test_negative_and_absurd_array_sizes_are_compile_time_errors(tmp_path, declaration, expected):
    source = f'''
from numba import cuda, float32, float64, void


@cuda.jit(void(float32[::1]))
def k(out):
    buf = {declaration}
    out[0] = buf[0]
'''
    with pytest.raises(kiln_cpu.CompileError) as error:
        kiln_cpu.compile_source(source, tmp_path)
    assert expected in str(error.value), (
        f"{declaration} must be refused with {expected!r}, got:\n{error.value}")


def test_the_largest_local_array_compiles_and_runs(tmp_path):
    source = '''
from numba import cuda, float64, void


@cuda.jit(void(float64[::1]))
def k(out):
    buf = cuda.local.array(65536, float64)  # 512 KiB
    buf[65535] = 3.0
    out[0] = buf[65535]
'''
    module = kiln_cpu.compile_source(source, tmp_path)
    out = np.zeros(1)
    module.k[1, 1](out)
    assert out[0] == 3.0
