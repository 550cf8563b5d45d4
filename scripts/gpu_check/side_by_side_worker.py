"""One side of the device check's side-by-side step, in a process of its
own (scripts/gpu_check/side_by_side_runs.py starts them): the kernels of
scripts/gpu_check/kernels/side_by_side.py on Kiln (its built module, through
kiln.cuda) or on numba-cuda (the source, through numba.cuda). Both sides
run the very same code below: kiln.cuda has numba.cuda's host API.

    python3 side_by_side_worker.py kiln|numba FOLDER first-call --spawned-at T
    python3 side_by_side_worker.py kiln|numba FOLDER measure [--target cpu]

FOLDER holds the module side_by_side. `first-call` times, from T (when the
parent started this process, by time.time()), the imports and the first
launch of each kernel: a fresh process's first call. `measure` checks each
kernel against NumPy, times it with CUDA events, times 1,000 back-to-back
launches of an empty kernel, and reads each kernel's registers, shared
memory and how many of its blocks the device keeps resident. The last line
printed is the JSON of the results.
"""

import argparse
import collections
import json
import statistics
import sys
import time

import numpy as np

# The sizes each kernel is (checked against NumPy at, timed at), per target.
# On a GPU the timed sizes take a millisecond or so; NumPy's escape-time
# reference would take seconds at mandelbrot's, hence the smaller check.
# The CPU engine runs the small sizes only: it proves the scripts work.
SIZES = {
    "cuda": {"saxpy": (1 << 20, 1 << 26), "stencil": (1024, 8192), "block_sum": (1 << 20, 1 << 26),
             "mandelbrot": (512, 4096), "matmul": (512, 2048)},
    "cpu": {"saxpy": (1 << 16, 1 << 16), "stencil": (128, 128), "block_sum": (1 << 16, 1 << 16),
            "mandelbrot": (128, 128), "matmul": (128, 128)},
}
TIMED_RUNS = {"cuda": 10, "cpu": 3}
LAUNCHES = 1000
LAUNCH_ROUNDS = {"cuda": 5, "cpu": 3}
BLOCK = 256
SQUARE_BLOCK = 16
REDUCTION_BLOCKS = 1024  # block_sum's grid: a grid-stride loop covers the rest
MANDELBROT_REGION = (-2.0, 1.0, -1.5, 1.5)
MANDELBROT_ITERATIONS = 100
# Share of mandelbrot's pixels that must equal NumPy's: a GPU contracts
# z * z + c into fused multiply-adds, so points on the set's edge may
# escape an iteration sooner or later.
MANDELBROT_AGREEMENT = 0.99

Case = collections.namedtuple("Case", "launch matches threads_per_block shape")


def blocks(elements, threads):
    return (elements + threads - 1) // threads


def square_grid(rows, cols):
    return (blocks(cols, SQUARE_BLOCK), blocks(rows, SQUARE_BLOCK)), (SQUARE_BLOCK, SQUARE_BLOCK)


def saxpy_case(cuda, kernels, n, rng):
    a = np.float32(2.5)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    device_x, device_y, out = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, np.float32)
    return Case(lambda: kernels.saxpy[blocks(n, BLOCK), BLOCK](a, device_x, device_y, out),
                lambda: np.allclose(out.copy_to_host(), a * x + y, rtol=1e-6, atol=1e-6), BLOCK, [n])


def stencil_case(cuda, kernels, n, rng):
    grid = rng.random((n, n), dtype=np.float32)
    device_grid, smoothed = cuda.to_device(grid), cuda.device_array((n, n), np.float32)
    griddim, blockdim = square_grid(n, n)

    def matches():
        expected = grid.copy()
        expected[1:-1, 1:-1] = np.float32(0.25) * (grid[:-2, 1:-1] + grid[2:, 1:-1] +
                                                   grid[1:-1, :-2] + grid[1:-1, 2:])
        return np.allclose(smoothed.copy_to_host(), expected, rtol=1e-6)

    return Case(lambda: kernels.stencil[griddim, blockdim](device_grid, smoothed), matches,
                SQUARE_BLOCK * SQUARE_BLOCK, [n, n])


def block_sum_case(cuda, kernels, n, rng):
    values = rng.random(n, dtype=np.float32)
    device_values = cuda.to_device(values)
    grid = min(REDUCTION_BLOCKS, blocks(n, kernels.REDUCTION_BLOCK))
    partial_sums = cuda.device_array(grid, np.float32)
    return Case(lambda: kernels.block_sum[grid, kernels.REDUCTION_BLOCK](device_values, partial_sums),
                lambda: np.isclose(partial_sums.copy_to_host().sum(dtype=np.float64),
                                   values.sum(dtype=np.float64), rtol=1e-4),
                kernels.REDUCTION_BLOCK, [n])


def escape_times(rows, cols):
    """NumPy's mandelbrot image, computed as the kernel computes it."""
    min_x, max_x, min_y, max_y = MANDELBROT_REGION
    real = min_x + np.arange(cols) * (max_x - min_x) / cols
    imag = min_y + np.arange(rows) * (max_y - min_y) / rows
    c = real[None, :] + 1j * imag[:, None]
    z = np.zeros_like(c)
    counts = np.full(c.shape, MANDELBROT_ITERATIONS, np.int32)
    active = np.ones(c.shape, bool)
    for i in range(MANDELBROT_ITERATIONS):
        z[active] = z[active] * z[active] + c[active]
        escaped = active & (z.real * z.real + z.imag * z.imag >= 4)
        counts[escaped] = i
        active &= ~escaped
    return counts


def mandelbrot_case(cuda, kernels, n, rng):
    image = cuda.device_array((n, n), np.int32)
    griddim, blockdim = square_grid(n, n)
    def launch():
        kernels.mandelbrot[griddim, blockdim](*MANDELBROT_REGION, image, MANDELBROT_ITERATIONS)

    return Case(launch, lambda: np.mean(image.copy_to_host() == escape_times(n, n)) >= MANDELBROT_AGREEMENT,
                SQUARE_BLOCK * SQUARE_BLOCK, [n, n])


def matmul_case(cuda, kernels, n, rng):
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    device_a, device_b, c = cuda.to_device(a), cuda.to_device(b), cuda.device_array((n, n), np.float32)
    griddim, blockdim = (blocks(n, kernels.TILE), blocks(n, kernels.TILE)), (kernels.TILE, kernels.TILE)
    return Case(lambda: kernels.matmul[griddim, blockdim](device_a, device_b, c),
                lambda: np.allclose(c.copy_to_host(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3),
                kernels.TILE * kernels.TILE, [n, n])


CASES = {"saxpy": saxpy_case, "stencil": stencil_case, "block_sum": block_sum_case,
         "mandelbrot": mandelbrot_case, "matmul": matmul_case}


def seconds_since(moment):
    return round(time.time() - moment, 4)


def first_call(side, folder, spawned_at):
    """From the process's start to each kernel's first launch finished."""
    cuda = import_cuda(side)
    result = {"runtime_imported_s": seconds_since(spawned_at)}
    started = time.perf_counter()
    kernels = import_kernels(folder)
    result["module_import_s"] = round(time.perf_counter() - started, 4)
    first_launches = {}
    for name, make_case in CASES.items():
        # The small sizes: a first call is the imports, the loading and the
        # launch, not the kernel's work.
        case = make_case(cuda, kernels, SIZES["cpu"][name][0], np.random.default_rng(1))
        started = time.perf_counter()
        case.launch()
        cuda.synchronize()
        first_launches[name] = round((time.perf_counter() - started) * 1000, 3)
        if "first_call_s" not in result:
            result["first_call_s"] = seconds_since(spawned_at)
    result["first_launch_ms"] = first_launches
    return result


def measure(side, folder, target):
    cuda = import_cuda(side)
    kernels = import_kernels(folder)
    rng = np.random.default_rng(1)
    measured = {"kernels": {}}
    for name, make_case in CASES.items():
        check_size, timed_size = SIZES[target][name]
        entry = measured["kernels"][name] = {}
        try:
            case = make_case(cuda, kernels, check_size, rng)
            case.launch()
            cuda.synchronize()
            entry["checked_shape"] = case.shape
            entry["matches_numpy"] = bool(case.matches())
            del case  # its device memory, before the timed size's
            timed = make_case(cuda, kernels, timed_size, rng)
            entry["timed_shape"] = timed.shape
            entry["kernel_ms"] = kernel_milliseconds(cuda, timed, TIMED_RUNS[target])
            entry["runs"] = TIMED_RUNS[target]
            entry.update(resources(side, cuda, kernels, name, timed.threads_per_block, target))
        except Exception as error:  # one kernel's failure must not hide the others' figures
            entry["error"] = f"{type(error).__name__}: {str(error)[:500]}"
    try:
        measured["launch_overhead_us"] = launch_overhead(cuda, kernels, LAUNCH_ROUNDS[target])
    except Exception as error:  # recorded, as a kernel's
        measured["launch_overhead_error"] = f"{type(error).__name__}: {str(error)[:500]}"
    return measured


def kernel_milliseconds(cuda, case, runs):
    """The median of `runs` launches, each timed by events around it alone
    (after one launch that loads the kernel)."""
    case.launch()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    times = []
    for _ in range(runs):
        start.record()
        case.launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return round(statistics.median(times), 4)


def launch_overhead(cuda, kernels, rounds):
    """Microseconds per launch of an empty kernel: the median over `rounds`
    of LAUNCHES back-to-back launches, synchronized at the end."""
    argument = cuda.device_array(32, np.float32)
    kernels.noop[1, 32](argument)
    cuda.synchronize()
    per_launch = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(LAUNCHES):
            kernels.noop[1, 32](argument)
        cuda.synchronize()
        per_launch.append((time.perf_counter() - started) / LAUNCHES * 1e6)
    return round(statistics.median(per_launch), 3)


def resources(side, cuda, kernels, name, threads, target):
    """Registers per thread, static shared memory per block, and how many
    blocks of `threads` threads the device keeps resident at once
    (max_cooperative_grid_blocks: cuOccupancyMaxActiveBlocksPerMultiprocessor
    times the multiprocessors; the parent makes an occupancy of it)."""
    specialization = next(iter(getattr(kernels, name).overloads.values()))
    found = {"threads_per_block": threads}
    if side == "numba":
        found["registers"] = specialization.regs_per_thread
        found["shared_bytes"] = specialization.shared_mem_per_block
    else:
        found.update(kiln_manifest_resources(cuda, kernels, name, target))
    if target == "cuda":
        found["resident_blocks"] = specialization.max_cooperative_grid_blocks(threads)
    return found


def kiln_manifest_resources(cuda, kernels, name, target):
    """What ptxas reported when Kiln built the kernel, from the module's
    manifest: a built module's kernels have no get_regs_per_thread() (that
    needs the compiler), and the manifest keeps the figures per cubin. For
    the device's architecture; on the CPU engine, for sm_90 (the H200's)."""
    from kiln._manifest_keys import Manifest, Resources, Specialization

    major, minor = cuda.get_current_device().compute_capability
    architecture = f"sm_{major}{minor}" if target == "cuda" else "sm_90"
    for entry in kernels.__kiln_manifest__[Manifest.SPECIALIZATIONS]:
        if entry[Specialization.NAME] == name:
            usage = (entry.get(Specialization.RESOURCES) or {}).get(architecture)
            if usage is None:
                return {"resources_of": architecture, "registers": None,
                        "why_no_registers": f"the module has no {architecture} cubin"}
            return {"resources_of": architecture, "registers": usage[Resources.REGISTERS],
                    "shared_bytes": usage[Resources.SHARED]}
    raise LookupError(f"no specialization of {name} in the module's manifest")


def import_cuda(side):
    if side == "kiln":
        import kiln.cuda as cuda
    else:
        from numba import cuda
    return cuda


def import_kernels(folder):
    sys.path.insert(0, folder)
    import side_by_side

    return side_by_side


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("side", choices=["kiln", "numba"])
    parser.add_argument("folder")
    parser.add_argument("phase", choices=["first-call", "measure"])
    parser.add_argument("--spawned-at", type=float)
    parser.add_argument("--target", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args()
    if args.phase == "first-call":
        print(json.dumps(first_call(args.side, args.folder, args.spawned_at)))
    else:
        print(json.dumps(measure(args.side, args.folder, args.target)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
