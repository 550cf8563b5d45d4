# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/kiln_names_numba.typed
#
# `kiln` is another name for `numba`: a module moved from Numba by changing
# its imports means what it meant.
import kiln
import kiln.cuda as kc
from kiln import cuda, float32, vectorize, void
from kiln.cuda.random import xoroshiro128p_type, xoroshiro128p_uniform_float32


@cuda.jit(void(float32[::1], xoroshiro128p_type[::1]))
def draw(out, states):
    i = kc.grid(1)
    out[i] = xoroshiro128p_uniform_float32(states, i) * float32(2)


@kiln.cuda.jit(device=True)
def twice(x):
    return 2 * x


@vectorize(["float32(float32)"], target="cuda")
def doubled(x):
    return twice(x)

# CHECK-LABEL: kernel @kiln_names_numba.draw$0
# CHECK:     call @numba.cuda.random.xoroshiro128p_uniform_float32$0
# CHECK-LABEL: function @kiln_names_numba.twice$0(float32 %0 x) -> float64
# CHECK-LABEL: function @kiln_names_numba.doubled$0(float32 %0 x) -> float32
# CHECK:     call @kiln_names_numba.twice$0
# CHECK-LABEL: kernel @kiln_names_numba.doubled.__ufunc__$0
