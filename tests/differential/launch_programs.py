"""Random kernels over the CUDA programming model's launch indices.

The first generator (programs.py) draws rich control flow over one fixed
set of 1-D arrays, always indexed by `t = cuda.grid(1)` and always storing
int64 or float64: it never stored a launch index into a 32-bit array, and
a CPU-engine fast path that dropped exactly `a[i] = i` (i =
cuda.threadIdx.x, int32 array) went unseen through 10,000 of its programs.
This generator covers the programming model instead: every launch-index
intrinsic and form

    cuda.threadIdx / blockIdx / blockDim / gridDim .x .y .z, cuda.grid(1/2/3),
    cuda.gridsize(1/2/3), cuda.laneid, cuda.warpsize, and global indices
    written by hand in three operand orders ("global x (block first)" is
    `cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`, "thread first"
    `cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x`, "dim first"
    `cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x`; also y and z)

read inline, through local variables, tuples (built, indexed, unpacked
from cuda.grid(2)) and device functions (some of which read intrinsics
themselves), in three forms: as an index (`a[i]`, `a[x, y]`, `a[t]` with t
a tuple), as the stored value (`a[j] = cuda.threadIdx.x`), and inside
arithmetic (`(i * 3 + 7) // 2`, `i ^ 5`, `min(i, k)`, `np.int16(i)`,
comparisons, `complex(i, 1)`, float arithmetic). Targets are arrays of
every dtype (int8 ... uint64, float16/32/64, complex64/128, bool) in every
layout: C, F, A over whole-array permutations (reversed axes, transposes),
A over sub-sampled views ("strided view": `base[::2]`, `base[1::3, ::-1]`),
0-d arrays and fields of structured arrays ("record"). Stores are guarded
or not (`if i < a.shape[0]:`, `len(a)`, `a.size`, `if i < n:`, an early
`return`, a condition on data), inline or through a device function, some
in grid-stride loops, some with an index counted from the end (`i -
a.shape[0]`) or narrowed (`np.uint8(i)`), over launches of 1 to 3
dimensions whose sizes are no multiples of a warp.

A coverage cell is (intrinsic, dtype, layout, form): an intrinsic used in
that form in the index or the value of a store into (or a load from) an
array of that dtype and layout. Each program is built around FOCUS_CELLS
cells taken in turn from a fixed shuffle of every possible cell
(coverage_cells()), so that any CELL_ROTATION consecutive seeds cover every
cell; the rest of the program is drawn freely.

Every program has one meaning, by construction:

  * race-free: a store's index is injective over the threads that run it
    ("owned": a global linear index, cuda.grid(k) into a k-d array, ...),
    or the stored value depends only on the index's own launch indices and
    on what every thread shares (blockDim, gridDim, warpsize, constants,
    scalar parameters, read-only inputs), so that any two threads that
    write one element write the same value ("determined"). Each array (each
    field of a structured array) has one store statement. The generator
    evaluates every index and guard over every thread of the launch with
    NumPy (StoreTracer) to check this, and check_program() repeats it on a
    finished program;
  * in bounds: arrays are sized from the range each index takes over the
    launch, and dimensions cut shorter are guarded;
  * defined arithmetic: every expression carries the interval of its
    values, so that no signed operation overflows (LLVM marks them nsw), no
    float converts to an integer out of range, no divisor is zero; shift
    counts are masked. Float products are exact (their operands' bits fit
    the mantissa), so contracting a product and a sum into an FMA changes
    nothing, and float results are IEEE-exact on every target.

The program renders twice: as the CUDA kernel, and as `@numba.njit`
functions that give Numba's compiled semantics (the harness's oracle). The
host kernel is a function of the twelve launch indices, passed as np.int32
(so that Numba types them as the GPU does); cuda.grid and cuda.gridsize
are computed from them in int64, laneid is the linear thread index in the
block modulo 32. Numba's CPU target has no float16: the host rendering
carries a float16 value as the float64 that holds it exactly, rounds each
float16 result with an exact round-to-nearest-even (`<name>_f16`), and
passes float16 arrays (and fields) as float64 shadows that run_host
converts back, a conversion that is exact because every value stored was
rounded once, as the GPU rounds it. Structured arrays reach the host
kernel as one view per field.

Some programs are plain (PLAIN_SHARE of those whose focus allows it):
values of int64, float64, bool and complex128 only, contiguous arrays, no
structured ones, most of them one block, so that Numba's CUDA simulator,
which computes with Python and NumPy scalars, computes what compiled Numba
does; simulator_judges says which programs it may judge.

Types come from Numba's own typing context (its CPU target, which types
every operation used here as the CUDA target does, and for float16, whose
rules the CPU target lacks, a table of the CUDA target's; both are checked
against the CUDA target in the unit tests). The CUDA target is not
imported by this generator, so that it also loads under Numba's simulator.

This module is the generator's entry, which the harness imports by name
(also in its child processes, through Program.generator); the parts live
in the package launch/, a module each:

    vocabulary.py        dtypes, layouts, forms and the launch intrinsics
    coverage.py          the cells: all, each seed's focus, a kernel's, report
    numba_typing.py      Numba's types of operations, and value limits
    expressions.py       expression nodes: type, range, sources, rendering
    statements.py        Let, Unpack, EarlyReturn, Guarded, ForRange, Store
    arrays.py            array parameters: views, signatures, arguments
    launches.py          launch shapes, and launch quantities per thread
    tracer.py            StoreTracer: statements over every thread at once
    builders.py          typed, range-checked arithmetic (or None)
    generator.py         Generator: the launch, and the program put together
    generate_indices.py  its launch indices (a mixin)
    generate_arrays.py   its inputs and outputs (a mixin)
    generate_values.py   its expressions of a kind (a mixin)
    generate_stores.py   its store plans, guards and loops (a mixin)
    program.py           Program, what the harness asks; check_program
"""

from launch.arrays import SENTINEL_BYTE
from launch.coverage import CELL_ROTATION, FOCUS_CELLS, coverage_cells, coverage_report, focus_cells
from launch.generator import generate
from launch.launches import MAX_THREADS
from launch.program import Program, check_program
from launch.vocabulary import DTYPES, INTRINSICS

__all__ = ["CELL_ROTATION", "DTYPES", "FOCUS_CELLS", "INTRINSICS", "MAX_THREADS", "SENTINEL_BYTE", "Program",
           "check_program", "coverage_cells", "coverage_report", "focus_cells", "generate"]
