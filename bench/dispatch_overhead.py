"""What a kernel launch costs on the host, without the launch itself.

    python3 bench/dispatch_overhead.py [--calls 200000] [--repeats 7] [--build-dir build]

examples/vector_add.py is built with `kiln build --module`, then a fresh
process of the test environment's Python (.venv) runs it on the CUDA path
with the stand-in driver library the tests build (KILN_TARGET=cuda,
KILN_CUDA_DRIVER): the stand-in's cuLaunchKernel only returns, so what is
timed is Kiln's dispatch: the launch configuration, the argument type key,
the specialization lookup, packing the parameters, and the calls into the
driver (cuCtxGetCurrent and cuLaunchKernel, each of which costs the
stand-in a lock and two getenv calls, so these figures are an upper bound). Arguments are device arrays (kiln.cuda.to_device), as in a program
that keeps its data on the GPU.

Timed, per call, as the fastest of --repeats loops of --calls calls:

* `kernel[grid, block](a, b, c)`: the whole Numba-style launch expression;
* `launch(a, b, c)` with `launch = kernel[grid, block]` made once: dispatch
  alone;
* `kernel[grid, block]`: the configuration alone;
* `launch.prepare(a, b, c)`: what a launch does before it calls the driver
  (type key, specialization, packed parameters), without the driver calls;
* an empty Python function call with three arguments, for scale.

Numba's dispatch needs a GPU to measure (its launch path creates a CUDA
context); its overhead is about 7-10 µs per launch (issue 4's figure).
"""

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402


def worker(options):
    import numpy as np

    import kiln.cuda as cuda

    module = __import__(options.module)
    kernel = module.vector_add
    n = 1 << 10
    x = cuda.to_device(np.arange(n, dtype=np.float32))
    y = cuda.to_device(np.arange(n, dtype=np.float32))
    r = cuda.device_array(n, dtype=np.float32)
    grid, block = 4, 256
    launch = kernel[grid, block]

    def nothing(a, b, c):
        pass

    results = {}
    for name in _STATEMENTS:
        code = compile(
            "def loop(calls):\n"
            "    for _ in range(calls):\n"
            f"        {_STATEMENTS[name]}\n",
            "<loop>",
            "exec",
        )
        namespace = {"kernel": kernel, "launch": launch, "nothing": nothing, "r": r, "x": x, "y": y,
                     "grid": grid, "block": block}
        exec(code, namespace)
        loop = namespace["loop"]
        loop(1000)
        best = float("inf")
        for _ in range(options.repeats):
            start = time.perf_counter()
            loop(options.calls)
            best = min(best, (time.perf_counter() - start) / options.calls)
        results[name] = best
    cuda.synchronize()
    print(json.dumps(results))


_STATEMENTS = {
    "kernel[grid, block](a, b, c)": "kernel[grid, block](r, x, y)",
    "launch(a, b, c)": "launch(r, x, y)",
    "kernel[grid, block]": "kernel[grid, block]",
    "launch.prepare(a, b, c)": "launch.prepare(r, x, y)",
    "empty Python call f(a, b, c)": "nothing(r, x, y)",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--module", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        return worker(options)

    build_dir = pathlib.Path(options.build_dir)
    kiln = str(build_dir / "driver" / "kiln")
    version = bc.wait_for_kiln(kiln)
    python = str(bc.ROOT / ".venv" / "bin" / "python")
    drivers = sorted(build_dir.glob("tests/runtime/stand_in_driver/*.so*"))
    if not drivers:
        raise SystemExit(f"no stand-in driver library under {build_dir}/tests/runtime/stand_in_driver")
    with tempfile.TemporaryDirectory(prefix="kiln-bench-dispatch-") as folder:
        module = "dispatch_vector_add"
        bc.timed_run([kiln, "build", bc.ROOT / "examples" / "vector_add.py", "--module", module, "-o", folder,
                      "--python", python, "--arch", "80"])
        env = bc.bench_env(PYTHONPATH=os.pathsep.join([str(build_dir / "python"), folder]),
                           KILN_TARGET="cuda", KILN_CUDA_DRIVER=str(drivers[0]))
        env.pop("KILN_STAND_IN_LOG", None)
        _, stdout = bc.timed_run([python, str(pathlib.Path(__file__).resolve()), "--worker", "--module", module,
                                  "--calls", str(options.calls), "--repeats", str(options.repeats)], env=env)
    results = json.loads(stdout.strip().splitlines()[-1])
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {bc.load_average()}")
    print(f"# fastest of {options.repeats} loops of {options.calls} calls; device arrays; stand-in driver\n")
    print("| what | per call |")
    print("| --- | ---: |")
    for name, seconds in results.items():
        print(f"| `{name}` | {seconds * 1e9:.0f} ns |")


if __name__ == "__main__":
    main()
