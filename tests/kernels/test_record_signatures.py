"""Record types in signatures, written as numba.types.Record takes them
(fields as (name, {"type": T, "offset": N}), the size, whether aligned;
NestedArray(T, shape) for a field holding a C array): kernels over
structured arrays and structured scalars, checked on the CPU engine, and
through ptxas for every default architecture."""

import numpy as np
import pytest

import kiln_cpu

PARTICLE = ("Record([('pos', {'type': NestedArray(float32, (3,)), 'offset': 0}), "
            "('mass', {'type': float64, 'offset': 16}), ('id', {'type': int32, 'offset': 24})], "
            "32, True)")
PARTICLE_DTYPE = np.dtype([("pos", np.float32, 3), ("mass", np.float64), ("id", np.int32)],
                          align=True)

SOURCE = f"""\
from numba import cuda


@cuda.jit("void({PARTICLE}[::1], float32)")
def drift(particles, dt):
    i = cuda.grid(1)
    if i < particles.size:
        p = particles[i]
        for k in range(3):
            p.pos[k] += dt * p.mass
        p[2] = i


@cuda.jit("void({PARTICLE}, float64[::1])")
def summarize(p, out):
    out[0] = p.pos[0] + p.pos[1] + p.pos[2]
    out[1] = p["mass"]
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(SOURCE, tmp_path_factory.mktemp("record_signatures"))


def test_kernels_over_a_structured_array(module):
    assert PARTICLE_DTYPE.itemsize == 32 and PARTICLE_DTYPE.fields["mass"][1] == 16
    particles = np.zeros(4, PARTICLE_DTYPE)
    particles["mass"] = [1.0, 2.0, 3.0, 4.0]
    module.drift[1, 4](particles, np.float32(0.5))
    np.testing.assert_array_equal(particles["pos"], np.repeat([[0.5], [1.0], [1.5], [2.0]], 3, 1))
    np.testing.assert_array_equal(particles["id"], [0, 1, 2, 3])


def test_a_structured_scalar_argument(module):
    particles = np.zeros(1, PARTICLE_DTYPE)
    particles[0] = ([1.0, 2.0, 3.5], 7.5, 1)
    out = np.zeros(2)
    module.summarize[1, 1](particles[0], out)
    np.testing.assert_array_equal(out, [6.5, 7.5])


def test_record_kernels_assemble_for_every_default_architecture(tmp_path, kiln):
    assert len(kiln_cpu.fat_binaries_for_every_default_architecture(SOURCE, tmp_path, kiln)) == 2
