"""What the CPU engine's interrupt polls (Ctrl-C) cost in the loops that have them.

    python3 bench/cpu_interrupt_polls.py [--repeats 11] [--rounds 5] [--scale 1.0] [--build-dir build] [--json FILE]

Every loop of a kernel that can run long polls the engine's interrupt word
on each iteration (a load of `KilnCpuThread::interrupt`, a volatile load of
the word, a branch); loops over a block's threads and loops whose
iterations the compiler can bound do not. Each case below is a pair of
kernels that differ only in that: the same loop over `range(k)` (k an
argument: it polls) and over `range(min(k, 4096))` (the compiler bounds it:
it does not), run with the same k, so that both do the same work. Both are
built with `kiln build --module` and timed in one process of the
benchmark environment's Python (KILN_TARGET=cpu), the two taking turns
launch by launch, so that other work on the machine hits both alike:

* inner_loop: per thread, `acc = acc * 0.5 + b[(i + j) % n]` for j in
  range(k), over 2^16 threads, k = 256: a short loop body, where a poll
  weighs most;
* mandelbrot: the escape-time loop of examples/mandelbrot.py (a `for` with
  an early `break`), over a 1024 x 512 grid, up to 200 iterations;
* spin_on_data: a `while` whose condition reads memory (`while j < k and
  b[j % n] >= 0`), over 2^16 threads, k = 256.

Reported: the fastest launch of each (over --rounds x --repeats), and
polling ÷ bounded.
"""

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402

LOOPS = {
    "inner_loop": ('"void(float64[::1], float64[::1], int64)"', "out, b, k", '''
    i = cuda.grid(1)
    if i < out.size:
        n = b.size
        acc = 0.0
        for j in range({bound}):
            acc = acc * 0.5 + b[(i + j) % n]
        out[i] = acc
'''),
    "mandelbrot": ('"void(uint8[:, ::1], int64)"', "image, k", '''
    x, y = cuda.grid(2)
    if y < image.shape[0] and x < image.shape[1]:
        real = -2.0 + x * (3.0 / image.shape[1])
        imag = -1.0 + y * (2.0 / image.shape[0])
        zr = 0.0
        zi = 0.0
        color = 0
        for step in range({bound}):
            zr, zi = zr * zr - zi * zi + real, 2.0 * zr * zi + imag
            if zr * zr + zi * zi >= 4.0:
                color = step
                break
        image[y, x] = color
'''),
    "spin_on_data": ('"void(float64[::1], float64[::1], int64)"', "out, b, k", '''
    i = cuda.grid(1)
    if i < out.size:
        n = b.size
        limit = {bound}
        j = 0
        acc = 0.0
        while j < limit and b[(i + j) % n] >= 0.0:
            acc += b[(i + j) % n]
            j += 1
        out[i] = acc
'''),
}

KERNELS = "from numba import cuda\n\n" + "".join(
    f"\n@cuda.jit({signature})\ndef {name}_{variant}({parameters}):{body.format(bound=bound)}\n"
    for name, (signature, parameters, body) in LOOPS.items()
    for variant, bound in [("polling", "k"), ("bounded", "min(k, 4096)")])


def worker(options):
    import numpy as np

    module = __import__(options.module)
    rng = np.random.default_rng(1)
    threads = int(2**16 * options.scale)
    b = rng.random(4099)
    out = np.zeros(threads)
    width, height = max(64, int(1024 * options.scale ** 0.5)), max(32, int(512 * options.scale ** 0.5))
    image = np.zeros((height, width), np.uint8)
    launches = {
        "inner_loop": (lambda kernel: kernel[(threads + 255) // 256, 256](out, b, 256),
                       f"{threads:,} threads x 256 iterations", lambda: out.copy()),
        "mandelbrot": (lambda kernel: kernel[((width + 31) // 32, (height + 7) // 8), (32, 8)](image, 200),
                       f"{width} x {height} points, up to 200 iterations", lambda: image.copy()),
        "spin_on_data": (lambda kernel: kernel[(threads + 255) // 256, 256](out, b, 256),
                         f"{threads:,} threads x 256 iterations", lambda: out.copy()),
    }
    results = {}
    for case, (launch, size, result) in launches.items():
        kernels = {variant: getattr(module, f"{case}_{variant}") for variant in ("polling", "bounded")}
        outputs = {}
        for variant, kernel in kernels.items():
            launch(kernel)
            outputs[variant] = result()
        if not np.array_equal(outputs["polling"], outputs["bounded"]):
            raise SystemExit(f"{case}: the polling and the bounded kernel computed different results")
        times = {variant: [] for variant in kernels}
        for _ in range(options.repeats):
            for variant, kernel in kernels.items():
                start = time.perf_counter()
                launch(kernel)
                times[variant].append(time.perf_counter() - start)
        results[case] = {"size": size, "times": times}
    print(json.dumps(results))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes, each --repeats launches")
    parser.add_argument("--scale", type=float, default=1.0, help="problem sizes relative to the defaults")
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--module", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        return worker(options)

    best = {}
    version = None
    for _ in range(options.rounds):
        results, version = bc.run_cpu_worker(__file__, KERNELS, "cpu_poll_kernels", options.build_dir,
                                             ["--repeats", str(options.repeats), "--scale", str(options.scale)])
        for case, measured in results.items():
            kept = best.setdefault(case, {"size": measured["size"], "fastest": {}})
            for variant, times in measured["times"].items():
                kept["fastest"][variant] = min(kept["fastest"].get(variant, min(times)), min(times))
    load = bc.load_average()
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {load}")
    print(f"# fastest of {options.rounds} x {options.repeats} launches; KILN_TARGET=cpu\n")
    rows = [[case, kept["size"], bc.ms(kept["fastest"]["polling"], 2), bc.ms(kept["fastest"]["bounded"], 2),
             f"{kept['fastest']['polling'] / kept['fastest']['bounded']:.2f}"] for case, kept in best.items()]
    print(bc.table(["loop", "size", "polling", "bounded", "polling ÷ bounded"], rows, "llrrr"))
    bc.write_json(options.json, {"repeats": options.repeats, "rounds": options.rounds, "scale": options.scale,
                                 "load_average": load, "best": best})


if __name__ == "__main__":
    main()
