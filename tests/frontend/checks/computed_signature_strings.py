# RUN: %kiln check %s 2>&1 | FileCheck %s
# RUN: sed 's/^ELEMENT = "float64"/ELEMENT = "flaot64"/' %s > %t.py
# RUN: not %kiln check %t.py 2>&1 | FileCheck %s --check-prefix=MISTAKE
#
# A signature string the module computes, as Numba takes any str: a record
# type kept in a module constant and joined into the signature.
from numba import cuda

PARTICLE = ("Record([('pos', {'type': NestedArray(float32, (3,)), 'offset': 0}), "
            "('mass', {'type': float64, 'offset': 16})], 24, True)")
ELEMENT = "float64"


# CHECK: kernel drift
# CHECK-NEXT: (array(Record(pos[type=nestedarray(float32, (3,));offset=0],mass[type=float64;offset=16];24;True), 1d, C), float32) -> none
@cuda.jit("void(" + PARTICLE + "[::1], float32)")
def drift(particles, dt):
    i = cuda.grid(1)
    if i < particles.size:
        for k in range(3):
            particles[i].pos[k] += dt * particles[i].mass


# A mistake in a computed string is shown in the string, named after the
# module's file:
# MISTAKE: computed_signature_strings.py.tmp.py (signature string):1:6: error: name 'flaot64' is not defined in a signature string
# MISTAKE-NEXT: void(flaot64[::1], flaot64)

# CHECK: kernel scale
# CHECK-NEXT: (array(float64, 1d, C), float64) -> none
@cuda.jit("void(" + ELEMENT + "[::1], " + ELEMENT + ")")
def scale(x, factor):
    x[0] *= factor
