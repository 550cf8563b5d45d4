# RUN: %kiln build %s --emit typed -o %t
# RUN: FileCheck %s < %t/fastmath_flag_sets.typed
# RUN: %kiln build %s --emit llvm --arch 80 -o %t/llvm
# RUN: FileCheck %s --check-prefix=LLVM < %t/llvm/scale.0.sm_80.ll
#
# fastmath= as a set of LLVM's fast-math flags, as Numba takes it (written
# in place, or a module constant): the kernel's floating-point operations
# get those flags alone; "fast" means all of them.
from numba import cuda

FLAGS = {"nsz", "arcp", "contract"}


@cuda.jit(device=True, fastmath=FLAGS)
def halve(x):
    return x / 2.0


@cuda.jit("void(float32[::1])", fastmath={"nsz", "arcp"})
def scale(a):
    a[0] = halve(a[0]) * 3.0


@cuda.jit("void(float32[::1])", fastmath={"fast"})
def everything(a):
    a[0] = a[0] * 3.0

# CHECK-DAG: @fastmath_flag_sets.halve${{.*}} options(fastmath, fastmath_flags=(arcp, contract, nsz)) {
# CHECK-DAG: @fastmath_flag_sets.scale${{.*}} options(fastmath, fastmath_flags=(arcp, nsz)) {
# CHECK-DAG: @fastmath_flag_sets.everything${{.*}} options(fastmath) {

# The device function's division, inlined, keeps its own flags.
# LLVM: fmul nsz arcp contract double %{{[0-9]+}}, 5.000000e-01
# LLVM-NEXT: fmul nsz arcp double %{{[0-9]+}}, 3.000000e+00
