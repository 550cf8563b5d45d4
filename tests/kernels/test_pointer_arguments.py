"""Kernels that take CPointer arguments (`types.CPointer(types.uint8)`):
an integer address, which Numba's launch passes as the pointer (a device
array's `__cuda_array_interface__["data"][0]`, an array's
`ctypes.data`), indexed as `p[i]` to load and store the pointee, on the CPU
engine and for every GPU architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = '''
from numba import cuda, types


@cuda.jit(types.void(types.CPointer(types.uint8), types.uint32))
def add_one(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] += 1


@cuda.jit("void(CPointer(float64), CPointer(float64), int64)")
def scaled_copy(source, target, n):
    for i in range(n):
        target[n - 1 - i] = source[i] * 2.5
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("pointers"), name="pointers")


def test_a_device_arrays_address_is_a_pointer_to_its_data(built):
    from kiln import cuda

    x = cuda.to_device(np.arange(10, dtype=np.uint8))
    built.add_one[1, 32](x.__cuda_array_interface__["data"][0], len(x))
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(1, 11, dtype=np.uint8))


def test_pointers_of_any_element_type_load_and_store_through_an_index(built):
    source = np.linspace(0, 1, 7)
    target = np.zeros(7)
    built.scaled_copy[1, 1](source.ctypes.data, target.ctypes.data, 7)
    np.testing.assert_array_equal(target, (source * 2.5)[::-1])


def test_a_pointer_takes_an_integer_address_only(built):
    with pytest.raises(TypeError, match=r"argument 1 \('x'\) of 'add_one' is float64, but the kernel takes "
                                        r"uint8\* there"):
        built.add_one[1, 1](1.5, 1)


def test_every_architecture_assembles_pointer_loads_and_stores(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 2


@pytest.mark.parametrize("signature, body, message", [
    ("void(CPointer(float32), int64)", "p[1.5] = 2", r"cannot index float32\* with float64"),
    ("void(CPointer(uint8), int64)", "p[0] = 1j", r"cannot store complex128 into uint8\*"),
    ("void(CPointer(UniTuple(int64, 2)), int64)", "pass",
     r"CPointer\(UniTuple\(int64 x 2\)\) is not supported: a pointer's values are numbers or booleans"),
])
def test_what_a_pointer_cannot_do_is_refused_with_the_types(tmp_path, signature, body, message):
    source = f'from numba import cuda\n\n@cuda.jit("{signature}")\ndef k(p, n):\n    {body}\n'
    with pytest.raises(kiln_cpu.CompileError, match=message):
        kiln_cpu.compile_source(source, tmp_path, name="refused")
