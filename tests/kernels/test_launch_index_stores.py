"""Launch indices stored as they are: `a[i] = i` with i = cuda.threadIdx.x
into an int32 array stores the 32-bit index itself, with no conversion
between the value and the store. Every form of launch index (threadIdx,
laneid, blockIdx, cuda.grid, hand-written global indices in either
operand order) into arrays of 32-bit and other widths, guarded or not,
with index checks on and off, over grids of one block and of several
blocks whose sizes are no multiple of a warp, must store what Numba
stores. Kernels over 0-d arrays build and run too.
"""

import itertools
import textwrap

import numpy as np
import pytest

import kiln_cpu

# (name, body lines, the value thread (block, thread) stores at index i).
FORMS = [
    ("thread_x", ["i = cuda.threadIdx.x", "a[i] = i"], lambda b, t, d: (t, t)),
    ("thread_x_plus_zero", ["i = cuda.threadIdx.x", "a[i] = i + 0"], lambda b, t, d: (t, t)),
    ("lane_at_thread_x", ["a[cuda.threadIdx.x] = cuda.laneid"], lambda b, t, d: (t, t % 32)),
    ("thread_x_at_grid", ["a[cuda.grid(1)] = cuda.threadIdx.x"], lambda b, t, d: (b * d + t, t)),
    ("block_x_at_grid", ["a[cuda.grid(1)] = cuda.blockIdx.x"], lambda b, t, d: (b * d + t, b)),
    ("lane_at_grid", ["a[cuda.grid(1)] = cuda.laneid"], lambda b, t, d: (b * d + t, t % 32)),
    ("global_block_first", ["i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "a[i] = i"],
     lambda b, t, d: (b * d + t, b * d + t)),
    ("global_thread_first", ["i = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x",
                             "a[i] = cuda.threadIdx.x"], lambda b, t, d: (b * d + t, t)),
    ("grid_value", ["i = cuda.grid(1)", "a[i] = i"], lambda b, t, d: (b * d + t, b * d + t)),
]
# The forms whose index is the thread's index in its block.
ONE_BLOCK = {"thread_x", "thread_x_plus_zero", "lane_at_thread_x"}
DTYPES = ["int32", "uint32", "int64", "int16", "uint8", "float32", "float64"]
LAUNCHES = [(1, 8), (1, 45), (3, 33), (5, 64)]


def kernel_name(form, dtype, guarded, checked):
    return f"{form}_{dtype}_{'guarded' if guarded else 'bare'}_{'checked' if checked else 'unchecked'}"


def kernel_source(form, lines, dtype, guarded, checked):
    body = list(lines)
    if guarded:
        # The store, under the guard every real kernel has.
        *setup, store = body
        index = store.split("[", 1)[1].split("]", 1)[0]
        body = setup + [f"if {index} < a.size:", f"    {store}"]
    decorator = f'@cuda.jit("void({dtype}[::1])"{"" if checked else ", boundscheck=False"})'
    return "\n".join([decorator, f"def {kernel_name(form, dtype, guarded, checked)}(a):",
                      *("    " + line for line in body)])


CASES = list(itertools.product(FORMS, DTYPES, [False, True], [True, False]))

SOURCE = "from numba import cuda, types\n\n\n" + "\n\n\n".join(
    kernel_source(form, lines, dtype, guarded, checked)
    for (form, lines, _), dtype, guarded, checked in CASES) + textwrap.dedent('''


    @cuda.jit((types.Array(types.int64, 0, "C"), types.Array(types.int64, 0, "C")))
    def zero_dimensional(r, x):
        r[()] = x[()] + 2


    @cuda.jit((types.Array(types.float32, 0, "A"), types.Array(types.float32, 0, "A")))
    def zero_dimensional_view(r, x):
        r[()] = x[()] * 2
    ''')


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("launch_index_stores") / "launch_index_stores.py"
    path.write_text(SOURCE)
    return kiln_cpu.compile_module(path)


# Forms whose index is the thread's index in its block run on one block.
LAUNCHED = [pytest.param(case, blocks, threads, id=f"{kernel_name(case[0][0], *case[1:])}-{blocks}x{threads}")
            for case in CASES for blocks, threads in LAUNCHES
            if blocks == 1 or case[0][0] not in ONE_BLOCK]


@pytest.mark.parametrize("case, blocks, threads", LAUNCHED)
def test_launch_index_is_stored(module, case, blocks, threads):
    (form, _, expect), dtype, guarded, checked = case
    # Room for every thread's store; a guarded kernel gets fewer elements
    # than threads, which its guard keeps in bounds.
    size = blocks * threads - (3 if guarded else 0)
    array = np.full(size, 99, dtype)
    getattr(module, kernel_name(form, dtype, guarded, checked))[blocks, threads](array)
    want = np.full(size, 99, dtype)
    for b, t in itertools.product(range(blocks), range(threads)):
        index, value = expect(b, t, threads)
        if index < size:
            want[index] = np.array(value).astype(dtype)
    np.testing.assert_array_equal(
        array, want, err_msg=f"{kernel_name(form, dtype, guarded, checked)}[{blocks}, {threads}] "
                             "stored something else than each thread's launch index")


def test_zero_dimensional_arrays_build_and_run(module):
    result = np.zeros((), np.int64)
    module.zero_dimensional[1, 1](result, np.array(40, np.int64))
    assert result[()] == 42, "r[()] = x[()] + 2 over 0-d arrays must store 42"


def test_zero_dimensional_views_of_a_layout_build_and_run(module):
    result = np.zeros((), np.float32)
    module.zero_dimensional_view[1, 1](result, np.array(1.5, np.float32))
    assert result[()] == 3.0, "r[()] = x[()] * 2 over 0-d arrays of layout A must store 3.0"
