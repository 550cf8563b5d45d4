"""The course's typing examples: constant widths, widening, integer typing.

Source: "Numba for CUDA Programmers", session 2, "Width of constants",
"Widening arithmetic", "Widening propagation", "Preventing widening",
"Limiting register usage" and "Integer arithmetic example" / "Integer
arithmetic 'solution'". All of them are launched on float32 data (``x =
np.zeros(1, dtype=np.float32)``) except the integer example, which uses
``np.zeros((1024, 3), dtype=np.int32)``.

What it shows (see the matching JSON in tests/frontend/numba_golden/):

* float literals are float64: ``x[0] = 2.0`` stores a float64 constant into
  a float32 array;
* float32 + float64 -> float64, and the widening propagates through a chain
  of additions (``add_constant_widening``) unless the constant is cast with
  ``float32(2.0)`` (``add_constant_narrow``);
* ``max_registers`` as a decorator option (``add_constant_2``), with a
  parameter rebound to an array element, ``range`` over an int32 and loop
  variables that change type between iterations;
* integer typing prefers int64: ``i * 2 + j * 3`` is int64 even for int32
  data (``index_computation``), and forcing int32 everywhere needs a cast
  around every operation (``index_computation_int32``).
"""

from numba import cuda, float32, int32, void


@cuda.jit("void(float32[::1])")
def assign_constant(x):
    """Store a (float64) constant into a float32 array."""
    x[0] = 2.0


@cuda.jit("void(float32[::1])")
def add_constant(x):
    """float32 += float64 constant: the add is typed float64."""
    x[0] += 2.0


@cuda.jit("void(float32[::1], float32[::1])")
def add_constant_widening(x, y):
    """The float64 constant widens both additions to float64."""
    x[0] += y[0] + 2.0


@cuda.jit(void(float32[::1], float32[::1]))
def add_constant_narrow(x, y):
    """Casting the constant keeps the arithmetic in float32."""
    x[0] += y[0] + float32(2.0)


@cuda.jit(void(float32[::1], int32[::1], int32), max_registers=24)
def add_constant_2(x, y, a):
    """A register-hungry loop, compiled with a register limit request."""
    a = y[0]
    b = 2.0
    c = y[1] / 6
    d = y[2] % 8
    e = y[3] * y[4]
    for i in range(a):
        a += 2
        b -= c
        e *= d
        x[0] += a * b + c * d - e


@cuda.jit(void(int32[:, ::1]))
def index_computation(x):
    """Index arithmetic on int32 data is carried out in int64."""
    i = cuda.grid(1)

    if i < x.shape[0]:
        for j in range(3):
            x[i, j] = (i * 2) + (j * 3)


@cuda.jit(void(int32[:, ::1]))
def index_computation_int32(x):
    """The same computation with every operand and result cast to int32."""
    i = cuda.grid(1)

    if i < int32(x.shape[0]):
        for j in range(int32(3)):
            x[i, j] = int32(int32(int32(i) * int32(2)) + int32(int32(j) * int32(3)))
