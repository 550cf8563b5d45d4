"""Kernels whose threads wait only at block barriers run region by region:
a loop over the block's threads from one barrier to the next, or, for
kernels keeping much per thread across barriers (small_frames and
large_frames here), each thread as a coroutine with no stack of its own.
Whatever the kernel does, the results are those of the fibers that run
kernels with warp collectives: the same values, the same order of threads
between barriers (which a racy kernel can see), the same barrier results,
the same errors, with threads that exit early or fail an index check,
threads waiting at different barriers, barriers in loops and in device
functions, local arrays live across barriers (of any size) and 2-D and 3-D
blocks; trees and scans whose steps start from constants (which the region
loops split at `tid < step`), steps wider than the block, and a barrier
only the threads inside a branch reach.

Each kernel has a twin that ends with a `cuda.syncwarp()` after its last
barrier, which sends it to fibers without changing what it computes.
"""

import re

import numpy as np
import pytest

# Locals live across the barrier: 8 KB (small_frames), frames the engine
# sets aside per thread, and 160 KB (large_frames), too large for that,
# allocated block by block.
FRAMES = '''
@cuda.jit
def {name}(x, out):
    shared = cuda.shared.array(64, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    local = cuda.local.array({items}, float64)
    for k in range({items}):
        local[k] = x[i] + k
    shared[tid] = local[{items} - 1]
    cuda.syncthreads()
    total = shared[(tid + 1) % cuda.blockDim.x]
    for k in range(0, {items}, 100):
        total += local[k]
    out[i] = total
    FIBERS_ONLY

'''
FRAME_ITEMS = {"small_frames": 1000, "large_frames": 20000}

KERNELS = '''
from kiln import cuda
from numba import float64, int32


@cuda.jit
def schedule(order, counter):
    # Records the order in which threads run between barriers; some
    # threads leave after each round.
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    for phase in range(4):
        if phase > 0 and tid % 7 == phase:
            return
        order[cuda.atomic.add(counter, 0, 1)] = tid + 10000 * phase
        cuda.syncthreads()
    FIBERS_ONLY


@cuda.jit
def votes(flags, counts, alls, anys):
    tid = cuda.threadIdx.x
    if tid % 11 == 10:
        return
    i = cuda.grid(1)
    counts[i] = cuda.syncthreads_count(flags[i])
    alls[i] = cuda.syncthreads_and(flags[i])
    anys[i] = cuda.syncthreads_or(flags[i] and tid > 40)
    FIBERS_ONLY


@cuda.jit(device=True)
def take_from_next(shared, tid, value):
    shared[tid] = value
    cuda.syncthreads()
    result = shared[(tid + 1) % cuda.blockDim.x]
    cuda.syncthreads()
    return result


@cuda.jit
def rotate_locals(x, out):
    shared = cuda.shared.array(128, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    local = cuda.local.array(4, float64)
    for k in range(4):
        local[k] = x[i] * (k + 1)
    for k in range(4):
        local[k] = take_from_next(shared, tid, local[k])
    total = 0.0
    for k in range(4):
        total += local[k]
    out[i] = total
    FIBERS_ONLY


@cuda.jit
def split_barriers(x, out):
    # Even and odd threads wait at different barriers, which count as one.
    shared = cuda.shared.array(128, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    shared[tid] = x[i]
    if tid % 2 == 0:
        cuda.syncthreads()
        out[i] = shared[(tid + 1) % cuda.blockDim.x]
    else:
        cuda.syncthreads()
        out[i] = -shared[(tid + 1) % cuda.blockDim.x]
    FIBERS_ONLY


@cuda.jit
def read_past_the_end(x, out, counter):
    # The threads of a 2-D block take slots in the order they run; those
    # whose slot reads past the end of x fail, the others go on through the
    # next barrier. threadIdx.y is only in the error's message.
    shared = cuda.shared.array(64, float64)
    slot = cuda.atomic.add(counter, 0, 1)
    shared[slot] = slot
    cuda.syncthreads()
    value = x[slot + 40]
    cuda.syncthreads()
    out[slot] = value + shared[(slot + 1) % 64]
    FIBERS_ONLY


@cuda.jit
def schedule_with_failures(x, order, counter):
    # Between barriers every thread records when it runs; some fail an
    # index check and end, the last thread of the block among them.
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    for phase in range(4):
        order[cuda.atomic.add(counter, 0, 1)] = tid + 10000 * phase
        if tid % 5 == phase:
            order[0] = x[tid + 100000]
        cuda.syncthreads()
    FIBERS_ONLY


@cuda.jit
def votes_with_failures(flags, x, counts):
    # The threads that fail before the barrier do not count.
    i = cuda.grid(1)
    if cuda.threadIdx.x % 11 == 10:
        counts[i] = x[i + 100000]
    counts[i] = cuda.syncthreads_count(flags[i])
    FIBERS_ONLY


@cuda.jit
def tree_from_constant(x, out):
    # A block's sum by a tree whose step starts from a constant.
    shared = cuda.shared.array(256, float64)
    tid = cuda.threadIdx.x
    shared[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    step = 128
    while step > 0:
        if tid < step:
            shared[tid] += shared[tid + step]
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = shared[0]
    FIBERS_ONLY


@cuda.jit
def tree_of_levels(x, out):
    # The same tree as a `for` over a fixed number of levels.
    shared = cuda.shared.array(256, float64)
    tid = cuda.threadIdx.x
    shared[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    for level in range(8):
        step = 128 >> level
        if tid < step:
            shared[tid] += shared[tid + step]
        cuda.syncthreads()
    if tid == 0:
        out[cuda.blockIdx.x] = shared[0]
    FIBERS_ONLY


@cuda.jit
def tree_wider_than_the_block(x, out):
    # The first steps exceed the block: every thread adds then.
    shared = cuda.shared.array(1024, float64)
    tid = cuda.threadIdx.x
    for k in range(tid, 1024, cuda.blockDim.x):
        shared[k] = x[cuda.blockIdx.x * 1024 + k]
    cuda.syncthreads()
    step = 512
    while step > 0:
        if tid < step:
            shared[tid] += shared[tid + step]
        cuda.syncthreads()
        step //= 2
    out[cuda.grid(1)] = shared[tid]
    FIBERS_ONLY


@cuda.jit
def barrier_inside_the_guard(x, out):
    # Only the threads below the step reach the barrier, inside the branch;
    # the others go round the loop without waiting. (The twin's syncwarp
    # comes first: at the end, lanes would wait at it for lanes waiting at
    # the barrier.)
    FIBERS_ONLY
    shared = cuda.shared.array(256, float64)
    tid = cuda.threadIdx.x
    shared[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    step = 128
    while step > 0:
        if tid < step:
            shared[tid] += shared[tid + step]
            cuda.syncthreads()
        step //= 2
    out[cuda.grid(1)] = shared[tid]


@cuda.jit
def scan_from_constant(x, out):
    # An inclusive scan: the threads from step on add, a value that lives
    # across the barrier between reading and writing.
    shared = cuda.shared.array(128, int32)
    tid = cuda.threadIdx.x
    shared[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    step = 1
    while step < 128:
        value = 0
        if tid >= step:
            value = shared[tid - step]
        cuda.syncthreads()
        shared[tid] += value
        cuda.syncthreads()
        step *= 2
    out[cuda.grid(1)] = shared[tid]
    FIBERS_ONLY


@cuda.jit
def block_transpose(x, out):
    # A (4, 8, 2) block reverses its 64 elements through shared memory.
    shared = cuda.shared.array(64, int32)
    linear = cuda.threadIdx.x + 4 * (cuda.threadIdx.y + 8 * cuda.threadIdx.z)
    base = 64 * (cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y)
    shared[linear] = x[base + linear]
    cuda.syncthreads()
    out[base + linear] = shared[63 - linear]
    FIBERS_ONLY
''' + "".join(FRAMES.format(name=name, items=items) for name, items in FRAME_ITEMS.items())


@pytest.fixture(scope="module")
def kernels(file_source_module):
    regions = KERNELS.replace("    FIBERS_ONLY\n", "")
    # The twins call the same device function, defined twice.
    fibers = re.sub(r"def (\w+)\(", r"def \1_fibers(", KERNELS).replace(
        "    FIBERS_ONLY\n", "    cuda.syncwarp()\n")
    return file_source_module("barrier_region_kernels", regions + fibers)


def run_both(kernel, twin, launch, *arrays):
    """The arrays after `kernel` and after its fibers twin, from copies."""
    results = []
    for each in (kernel, twin):
        copies = [a.copy() for a in arrays]
        each[launch](*copies)
        results.append(copies)
    return results


@pytest.mark.parametrize("block", [(32, 1, 1), (100, 1, 1), (8, 4, 2), (1, 1, 1), (1024, 1, 1)])
def test_threads_run_between_barriers_in_the_order_fibers_run_them(kernels, block):
    threads = block[0] * block[1] * block[2]
    results = []
    for kernel in (kernels.schedule, kernels.schedule_fibers):
        order = np.full(4 * threads, -1, np.int32)
        counter = np.zeros(1, np.int32)
        kernel[1, block](order, counter)
        results.append(order[:counter[0]].tolist())
    regions, fibers = results
    assert regions == fibers, (
        f"barrier regions ran the threads of a {block} block in another order than fibers: "
        f"first difference at {next(i for i, (a, b) in enumerate(zip(regions, fibers)) if a != b)}"
        if len(regions) == len(fibers) else
        f"barrier regions ran {len(regions)} thread steps, fibers {len(fibers)}")
    assert sorted(t for t in regions if t < 10000) == list(range(threads)), (
        "every thread must run its first round")


def test_reducing_barriers_count_only_threads_that_have_not_exited(kernels):
    rng = np.random.default_rng(7)
    flags = (rng.random(3 * 128) < 0.5).astype(np.int32)
    flags[128:256] = 1  # a block where every live thread agrees
    unset = np.full(flags.size, -1, np.int32)
    results = [[a.tolist() for a in arrays[1:]] for arrays in
               run_both(kernels.votes, kernels.votes_fibers, (3, 128), flags, unset, unset, unset)]
    assert results[0] == results[1], "syncthreads_count/_and/_or differ between barrier regions and fibers"

    counts = np.array(results[0][0]).reshape(3, 128)
    live = np.arange(128) % 11 != 10
    for block in range(3):
        expected = int(flags.reshape(3, 128)[block][live].sum())
        assert set(counts[block][live].tolist()) == {expected}, (
            f"syncthreads_count in block {block} must count the true flags of live threads")
        assert (counts[block][~live] == -1).all(), "threads that exited must not have written"
    alls = np.array(results[0][1]).reshape(3, 128)
    assert alls[1][live].all() and not alls[0][live].any(), "syncthreads_and over live threads"


def test_local_arrays_and_barriers_in_device_functions_survive_each_barrier(kernels):
    x = np.random.default_rng(3).random(4 * 128)
    following = np.roll(x.reshape(4, 128), -1, axis=1).ravel()
    expected = 0.0 + following * 1 + following * 2 + following * 3 + following * 4
    for kind, (_, out) in zip(("regions", "fibers"), run_both(
            kernels.rotate_locals, kernels.rotate_locals_fibers, (4, 128), x, np.zeros_like(x))):
        np.testing.assert_allclose(out, expected, rtol=0, atol=0,
                                   err_msg=f"{kind} lost a value across a barrier")


def test_frames_of_every_size_keep_their_values_from_launch_to_launch(kernels):
    # Launches alternate between kernels whose frames the engine sets aside
    # per thread, grows, and cannot set aside, on the same worker threads.
    x = np.random.default_rng(5).random(4 * 64)

    def expected(items):
        following = np.roll(x.reshape(4, 64), -1, axis=1).ravel() + items - 1
        return following + sum(x + k for k in range(0, items, 100))

    launches = ["small_frames", "large_frames", "small_frames", "rotate_locals", "large_frames",
                "small_frames"]
    for name in launches:
        for kernel in (getattr(kernels, name), getattr(kernels, name + "_fibers")):
            if name not in FRAME_ITEMS:
                kernel[2, 128](x, np.zeros_like(x))
                continue
            out = np.zeros_like(x)
            kernel[4, 64](x, out)
            np.testing.assert_allclose(out, expected(FRAME_ITEMS[name]), rtol=1e-12,
                                       err_msg=f"{kernel} lost a value across a barrier")


def test_multi_dimensional_blocks_and_grids(kernels):
    x = np.arange(64 * 6, dtype=np.int32)
    expected = x.reshape(6, 64)[:, ::-1].ravel()
    for kind, (_, out) in zip(("regions", "fibers"), run_both(
            kernels.block_transpose, kernels.block_transpose_fibers, ((3, 2), (4, 8, 2)), x,
            np.zeros_like(x))):
        assert out.tolist() == expected.tolist(), f"{kind} reversed the blocks wrongly"


def test_threads_waiting_at_different_barriers_meet_there(kernels):
    x = np.random.default_rng(11).random(2 * 128)
    following = np.roll(x.reshape(2, 128), -1, axis=1).ravel()
    expected = np.where(np.arange(x.size) % 2 == 0, following, -following)
    for kind, (_, out) in zip(("regions", "fibers"), run_both(
            kernels.split_barriers, kernels.split_barriers_fibers, (2, 128), x, np.zeros_like(x))):
        np.testing.assert_array_equal(out, expected, err_msg=f"{kind} split the barrier")


def test_a_thread_failing_an_index_check_ends_alone(kernels):
    x = np.arange(100, dtype=np.float64)
    results = []
    for kernel in (kernels.read_past_the_end, kernels.read_past_the_end_fibers):
        out = np.zeros(64)
        with pytest.raises(IndexError) as error:
            kernel[1, (8, 8)](x, out, np.zeros(1, np.int32))
        # The message names the kernel and its line, which differ.
        results.append((str(error.value).split(" (array")[0], out.tolist()))
    (message, out), fibers = results
    assert (message, out) == fibers, (
        f"an index error between barriers must end its thread as it does on fibers:\n"
        f"{message}\n{fibers[0]}")
    assert message.startswith("tid=[0, 7, 4] ctaid=[0, 0, 0]: "), (
        f"the lowest failing thread is (4, 7), slot 60: {message}")
    assert out[:60] == [40 + s + (s + 1) for s in range(60)], "the other threads must finish"


@pytest.mark.parametrize("name", ["tree_from_constant", "tree_of_levels"])
def test_trees_from_a_constant_step_sum_each_block(kernels, name):
    x = np.random.default_rng(13).random(5 * 256)
    regions, fibers = run_both(getattr(kernels, name), getattr(kernels, name + "_fibers"), (5, 256),
                               x, np.zeros(5))
    np.testing.assert_allclose(regions[1], x.reshape(5, 256).sum(axis=1), rtol=1e-12,
                               err_msg=f"{name} summed the blocks wrongly")
    assert regions[1].tolist() == fibers[1].tolist(), f"{name}: barrier regions and fibers differ"


@pytest.mark.parametrize("threads", [256, 100, 7, 1])
def test_a_tree_whose_step_exceeds_the_block(kernels, threads):
    x = np.random.default_rng(17).random(3 * 1024)
    regions, fibers = run_both(kernels.tree_wider_than_the_block, kernels.tree_wider_than_the_block_fibers,
                               (3, threads), x, np.zeros(3 * threads))
    expected = []
    for block in x.reshape(3, 1024):
        shared = block.copy()
        step = 512
        while step > 0:
            active = np.arange(min(step, threads))
            shared[active] += shared[active + step]
            step //= 2
        expected.extend(shared[:threads])
    np.testing.assert_allclose(regions[1], expected, rtol=1e-12,
                               err_msg=f"a tree from step 512 over blocks of {threads} threads")
    assert regions[1].tolist() == fibers[1].tolist(), "barrier regions and fibers differ"


def test_a_barrier_only_the_threads_below_the_step_reach(kernels):
    x = np.random.default_rng(19).random(2 * 256)
    regions, fibers = run_both(kernels.barrier_inside_the_guard, kernels.barrier_inside_the_guard_fibers,
                               (2, 256), x, np.zeros_like(x))
    assert regions[1].tolist() == fibers[1].tolist(), (
        "threads that skip a barrier inside a branch must run as they run on fibers")


@pytest.mark.parametrize("threads", [128, 100, 1])
def test_a_scan_whose_threads_from_the_step_on_add(kernels, threads):
    x = np.arange(4 * threads, dtype=np.int32) % 7
    regions, fibers = run_both(kernels.scan_from_constant, kernels.scan_from_constant_fibers, (4, threads),
                               x, np.zeros_like(x))
    expected = np.cumsum(x.reshape(4, threads), axis=1).ravel()
    assert regions[1].tolist() == expected.tolist(), f"the scan over blocks of {threads} threads"
    assert fibers[1].tolist() == expected.tolist()


# Blocks of 21 and 22 threads lose their last thread and the one before it
# in the first round: the threads that start the next rounds come from
# further back.
@pytest.mark.parametrize("block", [(24, 1, 1), (21, 1, 1), (22, 1, 1), (5, 1, 1), (100, 1, 1),
                                   (1, 1, 1), (8, 4, 2)])
def test_threads_that_fail_end_and_the_others_go_on_in_the_order_of_fibers(kernels, block):
    threads = block[0] * block[1] * block[2]
    results = []
    for kernel in (kernels.schedule_with_failures, kernels.schedule_with_failures_fibers):
        order = np.full(4 * threads + 1, -1, np.int32)
        counter = np.zeros(1, np.int32)
        with pytest.raises(IndexError) as error:
            kernel[1, block](np.zeros(8), order, counter)
        results.append((order[:counter[0]].tolist(), str(error.value).split(" (array")[0]))
    (regions, message), (fibers, fibers_message) = results
    assert regions == fibers, (
        f"with failing threads, barrier regions ran the threads of a {block} block in another order "
        f"than fibers")
    assert message == fibers_message.replace("schedule_with_failures_fibers", "schedule_with_failures")
    # A thread fails in the phase of its remainder by 5, after recording it.
    reaching_last = [t for t in range(threads) if t % 5 >= 3]
    assert sorted(t - 30000 for t in regions if t >= 30000) == reaching_last, (
        "the threads that fail in no earlier phase must run the last")


def test_reducing_barriers_count_only_threads_that_have_not_failed(kernels):
    flags = (np.random.default_rng(23).random(2 * 128) < 0.5).astype(np.int32)
    results = []
    for kernel in (kernels.votes_with_failures, kernels.votes_with_failures_fibers):
        counts = np.full(flags.size, -1, np.int32)
        with pytest.raises(IndexError):
            kernel[2, 128](flags, np.zeros(8, np.int32), counts)
        results.append(counts.tolist())
    assert results[0] == results[1], "syncthreads_count with failing threads differs from fibers"
    live = np.arange(128) % 11 != 10
    for block in range(2):
        expected = int(flags.reshape(2, 128)[block][live].sum())
        assert set(np.array(results[0]).reshape(2, 128)[block][live].tolist()) == {expected}, (
            f"syncthreads_count in block {block} must count the flags of threads that did not fail")


def test_barrier_kernels_get_a_block_entry_and_warp_collectives_do_not(kiln, tmp_path):
    source = tmp_path / "entries.py"
    source.write_text('''
from numba import cuda, int32


@cuda.jit("void(int32[::1])")
def with_barriers(out):
    shared = cuda.shared.array(64, int32)
    shared[cuda.threadIdx.x] = cuda.threadIdx.x
    cuda.syncthreads()
    out[cuda.threadIdx.x] = shared[63 - cuda.threadIdx.x]


@cuda.jit("void(int32[::1])")
def with_syncwarp(out):
    out[cuda.threadIdx.x] = 1
    cuda.syncthreads()
    cuda.syncwarp()
''')
    built = kiln("build", source, "--module", "entries", "-o", tmp_path, "--arch", "80")
    assert built.returncode == 0, built.stderr
    inspected = kiln("inspect", next(tmp_path.glob("entries*.so")))
    assert inspected.returncode == 0, inspected.stderr
    sections = {section.split(None, 1)[0]: section
                for section in re.split(r"^kernel ", inspected.stdout, flags=re.M)[1:]}
    assert "(with block entry)" in sections["with_barriers"], (
        f"a kernel with only block barriers must run as barrier regions:\n{sections['with_barriers']}")
    assert "(with block entry)" not in sections["with_syncwarp"], (
        f"a kernel with a warp collective must run as fibers:\n{sections['with_syncwarp']}")
