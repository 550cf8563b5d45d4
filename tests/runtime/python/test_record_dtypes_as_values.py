"""Structured dtypes used as types in kernels (`cuda.shared.array(n,
dtype=dt)`, `cuda.local.array`): a NumPy dtype or the Numba Record type
numba.from_dtype makes of it, held in a closure or computed by the module
at import, frozen when the kernel compiles, as Numba does; fields that hold
arrays included."""

import numpy as np
import pytest
from numba import from_dtype

PARTICLE = np.dtype([("id", np.int32), ("pos", np.float32, (3, 2))])

KERNELS = '''
import numpy as np
from numba import from_dtype
from kiln import cuda

PARTICLE = np.dtype([("id", np.int32), ("pos", np.float32, (3, 2))])
PARTICLE_T = from_dtype(PARTICLE)
TABLE = np.zeros(3, PARTICLE)
TABLE["id"] = [1, 2, 3]
TABLE["pos"] = np.arange(18, dtype=np.float32).reshape(3, 3, 2) + 0.5


@cuda.jit
def read_table(out):
    for i in range(3):
        out[i] = TABLE[i].id + TABLE[i].pos[2, 1]


@cuda.jit
def reverse_in_blocks(x, y):
    sm = cuda.shared.array(16, dtype=PARTICLE_T)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * 16 + tx
    sm[tx] = x[i]
    cuda.syncthreads()
    y[i] = sm[15 - tx]


def make_copier(dtype):
    @cuda.jit
    def copy_through_local(x, y):
        scratch = cuda.local.array(1, dtype=dtype)
        i = cuda.grid(1)
        if i < x.size:
            scratch[0] = x[i]
            y[i] = scratch[0]
    return copy_through_local
'''


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("record_dtype_kernels", KERNELS)


def test_a_structured_array_constant_keeps_its_array_fields(kernels):
    out = np.zeros(3)
    kernels.read_table[1, 1](out)
    table = kernels.TABLE
    np.testing.assert_array_equal(out, table["id"] + table["pos"][:, 2, 1])


def particles(count):
    x = np.zeros(count, PARTICLE)
    x["id"] = np.arange(count)
    x["pos"] = np.arange(count * 6, dtype=np.float32).reshape(count, 3, 2)
    return x


def test_a_module_global_record_type_sizes_a_shared_array(kernels):
    x = particles(32)
    y = np.zeros_like(x)
    kernels.reverse_in_blocks[2, 16](x, y)
    expected = np.concatenate([x[:16][::-1], x[16:][::-1]])
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("as_given", [from_dtype(PARTICLE), PARTICLE],
                         ids=["numba Record type", "NumPy dtype"])
def test_a_captured_record_type_or_dtype_types_a_local_array(kernels, as_given):
    x = particles(20)
    y = np.zeros_like(x)
    kernels.make_copier(as_given)[1, 32](x, y)
    np.testing.assert_array_equal(y, x)
