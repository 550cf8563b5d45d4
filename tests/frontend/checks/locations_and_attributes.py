# RUN: %kiln build %s --emit typed -o %t -q
# RUN: FileCheck %s < %t/locations_and_attributes.typed
#
# The typed IR carries what the back end needs without the source: the
# function's name, file and line, its options, whether it synchronizes, and
# each operation's line and column.
from numba import cuda


@cuda.jit("void(float32[:])", fastmath=True, max_registers=32)
def k(a):
    i = cuda.threadIdx.x
    cuda.syncthreads()
    a[i] = a[i] * 2

# CHECK:      module 'locations_and_attributes'
# CHECK:      kernel @locations_and_attributes.k$0(array(float32, 1d, A) %0 a) -> none synchronizes
# CHECK-SAME: name('k') path('{{.*}}locations_and_attributes.py') loc(11:5)
# CHECK-SAME: options(fastmath, max_registers=32) {
# CHECK:      intrinsic threadIdx.x : int32 loc(12:9)
# CHECK:      intrinsic syncthreads loc(13:5)
