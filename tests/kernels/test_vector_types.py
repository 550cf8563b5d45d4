"""numba.cuda's vector types (float32x4, int16x2, and the C aliases such as
float4 and uint2) in kernels, as numba-cuda compiles them: made from scalars
(converted to the element type) and vectors of the same element type whose
elements add up; read with .x, .y, .z, .w; passed to and returned from
device functions, and held in tuples. Checked on the CPU engine, and
through ptxas for every default architecture."""

import numpy as np
import pytest

import kiln_cpu

SOURCE = """\
from numba import cuda, float32, float64, int16, int64, void


@cuda.jit(device=True)
def swap(v):
    return cuda.float32x2(v.y, v.x)


@cuda.jit(void(float64[::1]))
def build(out):
    one = cuda.float32x1(1.0)
    pair = cuda.float32x2(2, 3.5)
    triple = cuda.float32x3(pair, one)
    quad = cuda.float4(one, triple)
    out[0] = quad.x
    out[1] = quad.y
    out[2] = quad.z
    out[3] = quad.w
    s = swap(pair)
    out[4] = s.x
    out[5] = s.y
    d = cuda.double2(1e300, -2.0)
    out[6] = d.x
    out[7] = d.y


@cuda.jit(void(int64[::1]))
def integers(out):
    a = cuda.int16x2(int16(-3), 40000)
    b = cuda.uint2(7, 8)
    total = 0
    for v in tuple((cuda.short2(a), cuda.short2(1, 2))):
        total += v.x + v.y
    out[0] = a.x
    out[1] = a.y
    out[2] = b.x + b.y
    out[3] = total
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("vector_types"))


def test_vectors_are_made_of_scalars_and_smaller_vectors(module):
    out = np.zeros(8)
    module.build[1, 1](out)
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.5, 1.0, 3.5, 2.0, 1e300, -2.0])


def test_integer_vectors_convert_their_elements(module):
    out = np.zeros(4, np.int64)
    module.integers[1, 1](out)
    # 40000 wraps in int16, as Numba's conversion does.
    wrapped = int(np.array(40000).astype(np.int16))
    np.testing.assert_array_equal(out, [-3, wrapped, 15, -3 + wrapped + 3])


def test_vector_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 2
