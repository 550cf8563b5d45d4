"""What a kernel launch costs on the host, without the launch itself.

    python3 bench/dispatch_overhead.py [--calls 200000] [--repeats 7] [--build-dir build] [--no-numba]
                                       [--json FILE]

examples/vector_add.py is built with `kiln build --module`, then a fresh
process of the benchmark environment's Python (bench/.venv) runs it on the CUDA path
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

Numba's dispatcher is timed the same way, in bench/.venv, with the same
statements on Numba device arrays: its launch path runs as a user runs it,
with a no-op instead of the driver's launch and stubs for the context it
would need (see `numba_worker` for exactly what is replaced).
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
    results = time_statements(options, kernel, r, x, y, _STATEMENTS)
    cuda.synchronize()
    print(json.dumps(results))


def numba_worker(options):
    """Numba's dispatcher, measured like Kiln's: `vector_add[4, 256](r, x, y)`
    with Numba device arrays, through numba-cuda's own launch path
    (CUDADispatcher.call -> _Kernel.launch -> _prepare_args for every
    argument -> cuda.core LaunchConfig -> cuda.core launch), with no GPU:

    * the current device is a stub of compute capability 8.0 for the
      dispatcher (`numba.cuda.dispatcher.get_current_device`) and for the
      code library (`CUDACodeLibrary._ensure_cc`), so the decorator compiles
      the kernel's PTX as usual (NVVM);
    * `CUDACodeLibrary.get_cufunc` returns a stand-in for the loaded CUfunction
      (a `.kernel` handle, a `.module` already initialized): no module load;
    * `numba.cuda.dispatcher.launch` (cuda.core's `launch`, which calls
      cuLaunchKernel) is a Python function that returns at once, the no-op
      driver call;
    * device arrays are Numba's `DeviceNDArray`s over a stand-in allocation
      (`gpu_data` with a fixed device pointer), since memalloc needs a context.

    Everything else, the launch configuration cache, argument typing and
    specialization lookup, the packing of each array's seven fields and the
    LaunchConfig, is numba-cuda's code as a user runs it."""
    import ctypes

    import numpy as np
    import numba.cuda.dispatcher as dispatcher
    from numba.cuda import codegen
    from numba.cuda.cudadrv import devicearray

    import numba_side

    class Device:
        compute_capability = (8, 0)

    class Module:
        initialized = True

        def setup(self):
            pass

    class Function:
        kernel = object()
        name = "vector_add"
        module = Module()

    class Allocation:
        def __init__(self, pointer):
            self.device_ctypes_pointer = ctypes.c_void_p(pointer)
            self.device_pointer_value = pointer
            self.handle = pointer

    launched = []
    dispatcher.get_current_device = lambda: Device()
    codegen.CUDACodeLibrary._ensure_cc = lambda self, cc: cc if cc is not None else (8, 0, "")
    codegen.CUDACodeLibrary.get_cufunc = lambda self: Function()
    dispatcher.launch = lambda stream, config, kernel, *args: launched.append(args) if not launched else None

    module = numba_side._import_example("vector_add")
    kernel = module.vector_add
    n = 1 << 10

    def array(pointer):
        return devicearray.DeviceNDArray((n,), (4,), np.float32, gpu_data=Allocation(pointer))

    r, x, y = array(0x7F0000000000), array(0x7F0000100000), array(0x7F0000200000)
    kernel[4, 256](r, x, y)
    # The parameters Numba packed: meminfo, parent, nitems, itemsize, data, shape, stride per array.
    if len(launched[0]) != 21 or launched[0][4] != 0x7F0000000000:
        raise SystemExit(f"unexpected launch parameters: {launched[0]}")
    print(json.dumps(time_statements(options, kernel, r, x, y, _NUMBA_STATEMENTS)))


def time_statements(options, kernel, r, x, y, statements):
    grid, block = 4, 256
    launch = kernel[grid, block]

    def nothing(a, b, c):
        pass

    results = {}
    for name in statements:
        code = compile(
            "def loop(calls):\n"
            "    for _ in range(calls):\n"
            f"        {statements[name]}\n",
            "<loop>",
            "exec",
        )
        namespace = {"kernel": kernel, "launch": launch, "nothing": nothing, "r": r, "x": x, "y": y,
                     "grid": grid, "block": block}
        exec(code, namespace)
        loop = namespace["loop"]
        loop(1000)
        times = []
        for _ in range(options.repeats):
            start = time.perf_counter()
            loop(options.calls)
            times.append((time.perf_counter() - start) / options.calls)
        results[name] = times  # per call, one entry per loop
    return results


_STATEMENTS = {
    "kernel[grid, block](a, b, c)": "kernel[grid, block](r, x, y)",
    "launch(a, b, c)": "launch(r, x, y)",
    "kernel[grid, block]": "kernel[grid, block]",
    "launch.prepare(a, b, c)": "launch.prepare(r, x, y)",
    "empty Python call f(a, b, c)": "nothing(r, x, y)",
}
# Numba has no `prepare`; the rest is timed the same way.
_NUMBA_STATEMENTS = {name: code for name, code in _STATEMENTS.items() if name != "launch.prepare(a, b, c)"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--no-numba", action="store_true", help="time Kiln only")
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--worker", choices=["kiln", "numba"], help=argparse.SUPPRESS)
    parser.add_argument("--module", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker == "kiln":
        return worker(options)
    if options.worker == "numba":
        return numba_worker(options)

    build_dir = pathlib.Path(options.build_dir)
    kiln = str(build_dir / "driver" / "kiln")
    version = bc.wait_for_kiln(kiln)
    python = bc.require_bench_python()
    drivers = sorted(build_dir.glob("tests/runtime/stand_in_driver/*.so*"))
    if not drivers:
        raise SystemExit(f"no stand-in driver library under {build_dir}/tests/runtime/stand_in_driver")
    script = str(pathlib.Path(__file__).resolve())
    loops = ["--calls", str(options.calls), "--repeats", str(options.repeats)]
    with tempfile.TemporaryDirectory(prefix="kiln-bench-dispatch-") as folder:
        module = "dispatch_vector_add"
        bc.timed_run([kiln, "build", bc.ROOT / "examples" / "vector_add.py", "--module", module, "-o", folder,
                      "--python", python, "--arch", "80"])
        env = bc.bench_env(PYTHONPATH=os.pathsep.join([str(build_dir / "python"), folder]),
                           KILN_TARGET="cuda", KILN_CUDA_DRIVER=str(drivers[0]))
        env.pop("KILN_STAND_IN_LOG", None)
        _, stdout = bc.timed_run([python, script, "--worker", "kiln", "--module", module, *loops], env=env)
    results = {"kiln": json.loads(stdout.strip().splitlines()[-1])}
    if not options.no_numba:
        env = bc.bench_env(PYTHONPATH=str(bc.BENCH), NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0")
        _, stdout = bc.timed_run([python, script, "--worker", "numba", *loops], env=env)
        results["numba"] = json.loads(stdout.strip().splitlines()[-1])
    load = bc.load_average()
    print(f"# {bc.command_line()}")
    print(f"# {bc.machine_line(version)}; load {load}")
    print(f"# fastest of {options.repeats} loops of {options.calls} calls; device arrays; Kiln: stand-in driver; "
          "Numba: no-op launch (see numba_worker)\n")
    print("| what | Kiln per call | Numba per call | Numba ÷ Kiln |")
    print("| --- | ---: | ---: | ---: |")
    numba = results.get("numba", {})
    for name, times in results["kiln"].items():
        seconds = min(times)
        other = min(numba[name]) if name in numba else None
        print(f"| `{name}` | {seconds * 1e9:.0f} ns | {f'{other * 1e9:.0f} ns' if other else '-'} | "
              f"{bc.ratio(other, seconds) if other else '-'} |")
    bc.write_json(options.json, {"calls": options.calls, "repeats": options.repeats, "load_average": load,
                                 "results": results})


if __name__ == "__main__":
    main()
