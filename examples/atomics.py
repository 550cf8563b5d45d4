"""A global thread counter: racy read-modify-write vs. an atomic add.

Source: the introductory notebook, section "Atomic Operations and Avoiding
Race Conditions". Every thread of a 64x64 launch increments one global
counter; the racy version loses updates, the atomic one gets 4096.

What it shows:

* an in-place ``+=`` on an array element (a non-atomic read-modify-write);
* ``cuda.atomic.add(array, index, value)`` on an int32 array with an int
  literal value.

The counter is ``cuda.to_device(np.array([0], dtype=np.int32))``: a
C-contiguous 1D int32 array with one element.
"""

from numba import cuda


@cuda.jit("void(int32[::1])")
def thread_counter_race(global_counter):
    """Increment global_counter[0] without synchronisation. This is bad."""
    global_counter[0] += 1  # This is bad: read, add and write are separate


@cuda.jit("void(int32[::1])")
def thread_counter_safe(global_counter):
    """Increment global_counter[0] atomically."""
    cuda.atomic.add(global_counter, 0, 1)  # Safely add 1 to offset 0 in global_counter array
