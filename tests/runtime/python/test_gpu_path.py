"""The GPU path of built modules, against the stand-in CUDA driver.

Each test builds an example with `kiln build --module`, runs host code in a
subprocess with KILN_TARGET=cuda, KILN_CUDA_DRIVER pointing at the stand-in
driver (tests/runtime/stand_in_driver: a test stand-in that simulates one
device on host memory and never runs kernels) and KILN_STAND_IN_LOG, then
reads the stand-in's call log and checks:

* the call sequence: cuInit, the primary context, an allocation and a
  host-to-device copy of every NumPy argument, the module loaded once, the
  function looked up by its entry name, the launch, the copies back, the
  frees;
* every launch's parameters: the bytes the stand-in read from kernelParams[i],
  with the size of the i-th `.param` of the entry's PTX, equal the values the
  ABI says (docs/abi.md): data pointers are the allocations, then shapes,
  then strides in bytes, then scalars, in `.param` order.

Kernel results are not checked here (the stand-in runs nothing): the CPU
engine's tests do that. The tests at the end run the same host code on a real
GPU and are skipped where there is none.
"""

import ctypes
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import textwrap

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILD_DIR = pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO_ROOT / "build"))
PACKAGE_DIR = BUILD_DIR / "python"
EXAMPLES = REPO_ROOT / "examples"

STAND_IN = BUILD_DIR / "tests" / "runtime" / "stand_in_driver" / "libkiln_stand_in_cuda_driver.so"

# Calls every target operation may make, which the sequence checks skip.
BOOKKEEPING = {"cuCtxGetCurrent", "cuGetErrorName", "cuGetErrorString", "cuDeviceGetAttribute"}


def entry_name(module, function, index=0):
    """The mangled .entry name of docs/abi.md: a.b.f$0 -> _kiln_1a1b1f_0."""
    parts = module.split(".") + [function]
    return "_kiln_" + "".join(f"{len(part)}{part}" for part in parts) + f"_{index}"


# Host code runs in a fresh interpreter per test: the runtime picks its
# target and loads the driver once per process.
PRELUDE = """
import json, sys
import numpy as np
import kiln
import kiln._runtime
import kiln.cuda as cuda
{import_module}

facts = {{}}

def host(name, array):
    facts[name] = {{"kind": "host", "pointer": array.ctypes.data, "nbytes": array.nbytes,
                   "shape": list(array.shape), "strides": list(array.strides)}}
    return array

def device(name, array):
    facts[name] = {{"kind": "device", "pointer": array.device_pointer, "nbytes": array.nbytes,
                   "shape": list(array.shape), "strides": list(array.strides)}}
    return array
"""

EPILOGUE = """
kiln._runtime.synchronize()
print("FACTS " + json.dumps({"target": kiln._runtime.target(), "facts": facts}))
"""


def run_host_code(build_module, tmp_path, source, module, code, env=None, stand_in=True):
    """Runs `code` after PRELUDE in a subprocess; returns (facts, log lines)."""
    log = tmp_path / "stand_in.jsonl"
    environment = dict(os.environ)
    environment.update({"KILN_TARGET": "cuda", "PYTHONPATH": str(PACKAGE_DIR)})
    for name in ("KILN_CUDA_DRIVER", "KILN_STAND_IN_LOG", "KILN_STAND_IN_FAIL", "KILN_STAND_IN_COMPUTE_CAPABILITY",
                 "KILN_STAND_IN_DEVICE_COUNT"):
        environment.pop(name, None)
    if stand_in:
        if not STAND_IN.exists():
            pytest.fail(f"the stand-in CUDA driver is not built at {STAND_IN}")
        environment.update({"KILN_CUDA_DRIVER": str(STAND_IN), "KILN_STAND_IN_LOG": str(log)})
    environment.update(env or {})
    import_module = ""
    if source is not None:
        folder = build_module(source, module)
        import_module = f"sys.path.insert(0, {str(folder)!r})\nimport {module} as module"
    script = PRELUDE.format(import_module=import_module) + textwrap.dedent(code) + EPILOGUE
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=environment, timeout=300)
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    facts = None
    for line in result.stdout.splitlines():
        if line.startswith("FACTS "):
            facts = json.loads(line[len("FACTS "):])
    return result, facts, lines


def run_ok(*args, **kwargs):
    result, facts, log = run_host_code(*args, **kwargs)
    assert result.returncode == 0 and facts, f"host code failed:\n{result.stdout}\n{result.stderr}"
    assert facts["target"] == "cuda"
    for line in log:
        assert line["result"] == "CUDA_SUCCESS", f"a driver call failed: {line}"
    return facts["facts"], log


def calls(log, name):
    return [line for line in log if line["call"] == name]


def main_calls(log):
    return [line for line in log if line["call"] not in BOOKKEEPING]


def pack(fmt, *values):
    return struct.pack("<" + fmt, *values).hex()


def array_params(pointer, fact):
    """The ABI's parameters of an array: data, shape..., strides..., as hex."""
    return ([pack("Q", pointer)] + [pack("q", extent) for extent in fact["shape"]]
            + [pack("q", stride) for stride in fact["strides"]])


def check_startup(log):
    names = [line["call"] for line in main_calls(log)]
    assert names[:5] == ["cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDevicePrimaryCtxRetain",
                         "cuCtxSetCurrent"], names[:8]


def last_before(lines, field, value, seq):
    """The last of `lines` whose `field` is `value` before sequence number `seq`."""
    matching = [line for line in lines if line[field] == value and line["seq"] < seq]
    return matching[-1] if matching else None


def first_after(lines, field, value, seq):
    """The first of `lines` whose `field` is `value` after sequence number `seq`."""
    matching = [line for line in lines if line[field] == value and line["seq"] > seq]
    return matching[0] if matching else None


def device_pointers(log, facts, launch):
    """Each host array's device copy: the allocation its host-to-device copy
    filled before `launch`. Checks the allocation and the copy."""
    pointers = {}
    for name, fact in facts.items():
        if fact["kind"] != "host":
            pointers[name] = fact["pointer"]
            continue
        # The argument's copy is the last one from its address before the
        # launch: an earlier copy may come from a temporary host buffer
        # that was freed and whose memory the array now occupies.
        copies = [line for line in calls(log, "cuMemcpyHtoDAsync_v2")
                  if line["srcHost"] == fact["pointer"] and line["seq"] < launch["seq"]]
        assert copies, f"{name}: expected a copy to the device before the launch"
        copy = copies[-1]
        assert copy["ByteCount"] == fact["nbytes"]
        # Device addresses are reused too: the allocation is the last one at
        # the copy's address before the copy.
        allocation = last_before(calls(log, "cuMemAlloc_v2"), "dptr", copy["dstDevice"], copy["seq"])
        assert allocation is not None, f"{name} was copied to {copy['dstDevice']}, not to an allocation"
        assert allocation["bytesize"] >= fact["nbytes"]
        pointers[name] = copy["dstDevice"]
    return pointers


def check_copies_back_and_frees(log, facts, pointers, launch):
    """Every host array is copied back after the launch, then its device copy freed."""
    for name, fact in facts.items():
        if fact["kind"] != "host":
            continue
        back = [line for line in calls(log, "cuMemcpyDtoHAsync_v2")
                if line["dstHost"] == fact["pointer"] and line["seq"] > launch["seq"]]
        assert len(back) == 1, f"{name}: expected one copy back after the launch, got {back}"
        assert back[0]["srcDevice"] == pointers[name] and back[0]["ByteCount"] == fact["nbytes"]
        free = first_after(calls(log, "cuMemFree_v2"), "dptr", pointers[name], back[0]["seq"])
        assert free is not None, f"{name}'s device copy is not freed after the copy back"
        # Copies into page-locked memory are asynchronous: the call must wait for them.
        waits = [line for line in calls(log, "cuStreamSynchronize") if line["seq"] > back[0]["seq"]]
        assert waits, f"{name}: the launch returns before its copy back has finished (no cuStreamSynchronize after it)"


def check_launch(log, module, function, grid, block, expected_params, shared=0):
    launches = [line for line in calls(log, "cuLaunchKernel") if line["function"] == entry_name(module, function)]
    assert launches, f"no launch of {entry_name(module, function)}: {[l['function'] for l in calls(log, 'cuLaunchKernel')]}"
    launch = launches[0]
    assert launch["grid"] == list(grid) and launch["block"] == list(block)
    assert launch["sharedMemBytes"] == shared
    logged = launch["params"]
    assert logged is not None, "the stand-in found no PTX for the entry"
    assert [p["hex"] for p in logged] == expected_params, json.dumps(logged, indent=1)
    loads = [line for line in calls(log, "cuModuleLoadData") if line["seq"] < launch["seq"]]
    functions = [line for line in calls(log, "cuModuleGetFunction")
                 if line["name"] == entry_name(module, function)]
    assert len(functions) == 1 and functions[0]["seq"] < launch["seq"]
    assert any(line["module"] == functions[0]["hmod"] for line in loads)
    return launch


def test_runtime_calls_reach_the_driver(tmp_path):
    facts, log = run_ok(None, tmp_path, None, None, """
        from kiln import _runtime as runtime
        info = runtime.device_info()
        assert info["name"] == "Kiln stand-in driver (not a GPU)", info
        assert info["compute_capability"] == (8, 6), info
        buffer = runtime.DeviceBuffer(64)
        data = host("data", np.arange(16, dtype=np.int32))
        back = host("back", np.zeros(16, dtype=np.int32))
        stream = runtime.Stream()
        start, end = runtime.Event(), runtime.Event(timing=False)
        start.record(stream.handle)
        runtime.copy_to_device(buffer.pointer, data, 64, stream.handle)
        runtime.fill(buffer.pointer, 0, 4, stream.handle)
        runtime.copy_to_host(back, buffer.pointer, 64, stream.handle)
        end.record(stream.handle)
        stream.synchronize()
        assert back[0] == 0 and (back[1:] == data[1:]).all(), back
        assert end.query() and stream.query()
        mapped = runtime.HostBuffer(32, mapped=True)
        facts["buffer"] = {"kind": "device", "pointer": buffer.pointer}
        facts["stream"] = {"kind": "stream", "pointer": stream.handle}
        facts["mapped"] = {"kind": "mapped", "pointer": mapped.pointer, "device": mapped.device_pointer}
        del buffer, mapped
    """, env={"KILN_STAND_IN_COMPUTE_CAPABILITY": "8.6"})
    check_startup(log)
    buffer, stream = facts["buffer"]["pointer"], facts["stream"]["pointer"]
    names = [line["call"] for line in main_calls(log)]
    sequence = ["cuMemAlloc_v2", "cuStreamCreate", "cuEventCreate", "cuEventCreate", "cuEventRecord",
                "cuMemcpyHtoDAsync_v2", "cuMemsetD8Async", "cuMemcpyDtoHAsync_v2", "cuEventRecord",
                "cuStreamSynchronize", "cuEventQuery", "cuStreamQuery", "cuMemHostAlloc",
                "cuMemHostGetDevicePointer_v2", "cuMemFree_v2", "cuMemFreeHost"]
    at = names.index("cuMemAlloc_v2")
    assert names[at:at + len(sequence)] == sequence, names[at:]
    assert [line["Flags"] for line in calls(log, "cuEventCreate")] == [0, 2]
    copy = calls(log, "cuMemcpyHtoDAsync_v2")[0]
    assert (copy["dstDevice"], copy["srcHost"], copy["ByteCount"], copy["hStream"]) == (
        buffer, facts["data"]["pointer"], 64, stream)
    assert calls(log, "cuMemHostAlloc")[0]["Flags"] == 3  # DEVICEMAP | PORTABLE
    assert calls(log, "cuMemFree_v2")[0]["dptr"] == buffer


def test_vector_add_sequence_and_parameters(build_module, tmp_path):
    facts, log = run_ok(build_module, tmp_path, EXAMPLES / "vector_add.py", "vector_add", """
        n = 1000
        r = host("r", np.zeros(n, dtype=np.float32))
        x = host("x", np.arange(n, dtype=np.float32))
        y = host("y", np.arange(n, dtype=np.float32) * 2)
        module.vector_add[4, 256](r, x, y)
        module.vector_add[4, 256](r, x, y)
    """)
    check_startup(log)
    launches = calls(log, "cuLaunchKernel")
    assert len(launches) == 2
    # The first call's copies, launch and copies back; the module loads once.
    first = launches[0]
    # The first call ends with its last free before the second launch.
    end = max(line["seq"] for line in calls(log, "cuMemFree_v2") if line["seq"] < launches[1]["seq"])
    first_calls = [line for line in log if line["seq"] <= end]
    pointers = device_pointers(first_calls, facts, first)
    expected = sum((array_params(pointers[name], facts[name]) for name in ("r", "x", "y")), [])
    check_launch(log, "vector_add", "vector_add", (4, 1, 1), (256, 1, 1), expected)
    assert [p["size"] for p in first["params"]] == [8, 8, 8] * 3
    check_copies_back_and_frees(first_calls, facts, pointers, first)
    assert len(calls(log, "cuModuleLoadData")) == 1
    assert len(calls(log, "cuModuleGetFunction")) == 1
    # The order of the main calls of one launch.
    names = [line["call"] for line in main_calls(first_calls)]
    assert names.index("cuModuleLoadData") < names.index("cuModuleGetFunction") < names.index("cuLaunchKernel")
    assert max(i for i, n in enumerate(names) if n == "cuMemcpyHtoDAsync_v2") < names.index("cuLaunchKernel")
    assert min(i for i, n in enumerate(names) if n == "cuMemcpyDtoHAsync_v2") > names.index("cuLaunchKernel")


def test_a_scalar_parameter(build_module, tmp_path):
    facts, log = run_ok(build_module, tmp_path, EXAMPLES / "vector_add.py", "vector_add", """
        data = host("data", np.arange(512, dtype=np.int32))
        module.increment_kernel[2, 256](data, 26)
    """)
    launch = calls(log, "cuLaunchKernel")[0]
    pointers = device_pointers(log, facts, launch)
    expected = array_params(pointers["data"], facts["data"]) + [pack("i", 26)]
    check_launch(log, "vector_add", "increment_kernel", (2, 1, 1), (256, 1, 1), expected)
    assert launch["params"][-1]["size"] == 4
    check_copies_back_and_frees(log, facts, pointers, launch)


def test_a_two_dimensional_array_and_float_scalars(build_module, tmp_path):
    facts, log = run_ok(build_module, tmp_path, EXAMPLES / "mandelbrot.py", "mandelbrot", """
        image = host("image", np.zeros((48, 72), dtype=np.uint8))
        module.create_fractal[(3, 2), (32, 32)](-2.0, 1.0, -1.0, 1.0, image, 20)
    """)
    launch = calls(log, "cuLaunchKernel")[0]
    pointers = device_pointers(log, facts, launch)
    assert facts["image"]["strides"] == [72, 1]
    expected = ([pack("d", -2.0), pack("d", 1.0), pack("d", -1.0), pack("d", 1.0)]
                + array_params(pointers["image"], facts["image"]) + [pack("q", 20)])
    check_launch(log, "mandelbrot", "create_fractal", (3, 2, 1), (32, 32, 1), expected)
    check_copies_back_and_frees(log, facts, pointers, launch)


def test_a_record_array_on_the_device(build_module, tmp_path):
    facts, log = run_ok(build_module, tmp_path, EXAMPLES / "monte_carlo_pi.py", "monte_carlo_pi", """
        from kiln.cuda.random import create_xoroshiro128p_states
        states = device("states", create_xoroshiro128p_states(4 * 64, seed=1))
        out = host("out", np.zeros(4 * 64, dtype=np.float32))
        module.compute_pi[4, 64](states, 100, out)
    """)
    launch = calls(log, "cuLaunchKernel")[-1]
    pointers = device_pointers(log, facts, launch)
    assert facts["states"]["strides"] == [16]
    # The states are a device allocation of the stand-in, passed as they are.
    assert any(line["dptr"] == facts["states"]["pointer"] for line in calls(log, "cuMemAlloc_v2"))
    expected = (array_params(pointers["states"], facts["states"]) + [pack("q", 100)]
                + array_params(pointers["out"], facts["out"]))
    check_launch(log, "monte_carlo_pi", "compute_pi", (4, 1, 1), (64, 1, 1), expected)
    check_copies_back_and_frees(log, facts, pointers, launch)


def test_device_arrays_are_not_copied(build_module, tmp_path):
    facts, log = run_ok(build_module, tmp_path, EXAMPLES / "vector_add.py", "vector_add", """
        n = 256
        r = device("r", cuda.device_array(n, dtype=np.float32))
        x = device("x", cuda.to_device(np.arange(n, dtype=np.float32)))
        y = device("y", cuda.to_device(np.ones(n, dtype=np.float32)))
        module.vector_add[1, 256](r, x, y)
    """)
    launch = calls(log, "cuLaunchKernel")[0]
    expected = sum((array_params(facts[name]["pointer"], facts[name]) for name in ("r", "x", "y")), [])
    check_launch(log, "vector_add", "vector_add", (1, 1, 1), (256, 1, 1), expected)
    assert not [line for line in calls(log, "cuMemcpyHtoDAsync_v2") if line["seq"] > launch["seq"]]
    assert not [line for line in calls(log, "cuMemcpyDtoHAsync_v2") if line["seq"] > launch["seq"]]


def test_eight_threads_share_one_module_load(build_module, tmp_path):
    facts, log = run_ok(build_module, tmp_path, EXAMPLES / "vector_add.py", "vector_add", """
        import threading
        def work():
            for _ in range(5):
                data = np.arange(256, dtype=np.int32)
                module.increment_kernel[1, 256](data, 1)
        threads = [threading.Thread(target=work) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    """)
    assert len(calls(log, "cuLaunchKernel")) == 40
    assert len(calls(log, "cuModuleLoadData")) == 1
    assert len(calls(log, "cuModuleGetFunction")) == 1
    assert len(calls(log, "cuMemFree_v2")) == len(calls(log, "cuMemAlloc_v2")) == 40


def test_no_binary_for_the_gpu_names_the_archs(build_module, tmp_path):
    result, _, log = run_host_code(build_module, tmp_path, EXAMPLES / "vector_add.py", "vector_add", """
        n = 256
        r, x, y = (np.zeros(n, dtype=np.float32) for _ in range(3))
        try:
            module.vector_add[1, 256](r, x, y)
        except Exception as error:
            print("ERROR", type(error).__name__, error)
    """, env={"KILN_STAND_IN_COMPUTE_CAPABILITY": "7.0"})
    assert result.returncode == 0, result.stderr
    error = next(line for line in result.stdout.splitlines() if line.startswith("ERROR"))
    assert "sm_70" in error and "sm_80" in error and "compute_80" in error, error
    assert not calls(log, "cuModuleLoadData") and not calls(log, "cuLaunchKernel")


def test_driver_errors_become_cuda_errors(build_module, tmp_path):
    result, _, log = run_host_code(build_module, tmp_path, EXAMPLES / "vector_add.py", "vector_add", """
        r, x, y = (np.zeros(256, dtype=np.float32) for _ in range(3))
        try:
            module.vector_add[1, 256](r, x, y)
        except kiln._runtime.CudaError as error:
            print("ERROR", error.code, error.name, error)
    """, env={"KILN_STAND_IN_FAIL": "cuLaunchKernel=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"})
    assert result.returncode == 0, result.stderr
    error = next(line for line in result.stdout.splitlines() if line.startswith("ERROR"))
    assert error.startswith("ERROR 701 CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES cuLaunchKernel failed"), error
    assert "vector_add" in error
    # The device copies are still freed.
    assert len(calls(log, "cuMemFree_v2")) == len(calls(log, "cuMemAlloc_v2"))


def test_kiln_target_cuda_without_a_device_says_why(tmp_path):
    result, _, _ = run_host_code(None, tmp_path, None, None, "", env={"KILN_STAND_IN_DEVICE_COUNT": "0"})
    assert result.returncode != 0
    assert "KILN_TARGET=cuda" in result.stderr and "no CUDA device" in result.stderr, result.stderr


LIMITS_SOURCE = """
from numba import cuda, int32, void


@cuda.jit(void(int32[::1]))
def four_gib_shared(out):
    buf = cuda.shared.array(1073741824, int32)  # 2**32 bytes
    buf[cuda.threadIdx.x] = 7
    out[0] = buf[0]


@cuda.jit(void(int32[::1]))
def simple(out):
    out[cuda.grid(1)] = 1
"""


def test_launch_limits_hold_on_the_gpu_path(kiln, tmp_path):
    """The checks before a launch are the CPU engine's: a static shared size
    is counted in 64 bits (2**32 bytes is not 0), and a dimension too large
    for 64 bits is too large, not below 1."""
    source = tmp_path / "gpu_limits.py"
    source.write_text(LIMITS_SOURCE)
    # PTX alone: no assembler accepts 4 GiB of shared memory.
    def build_ptx(path, name):
        folder = tmp_path / "built"
        built = kiln("build", path, "--module", name, "-o", folder, "--arch", "80-virtual",
                     "--python", sys.executable)
        assert built.returncode == 0, f"kiln build {path} failed:\n{built.stderr}"
        return folder

    result, _, log = run_host_code(build_ptx, tmp_path, source, "gpu_limits", """
        out = np.zeros(32, dtype=np.int32)
        for launch in (lambda: module.four_gib_shared[1, 32](out),
                       lambda: module.simple[2**64, 32](out),
                       lambda: module.simple[1, 2**64](out)):
            try:
                launch()
                print("ERROR none")
            except ValueError as error:
                print("ERROR", error)
    """)
    assert result.returncode == 0, result.stderr
    errors = [line for line in result.stdout.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 3 and "4294967296 static bytes" in errors[0], errors
    assert "exceeds the limit 2147483647 of dimension x" in errors[1], errors
    assert "exceeds the limit 1024 of dimension x" in errors[2], errors
    assert not calls(log, "cuLaunchKernel"), "a refused launch must not reach the driver"


COOPERATIVE_SOURCE = """
from numba import cuda


@cuda.jit("void(int32[::1])")
def rotate(x):
    i = cuda.grid(1)
    value = x[(i + 1) % x.size]
    cuda.cg.this_grid().sync()
    x[i] = value
"""


def test_a_kernel_that_syncs_the_grid_launches_cooperatively(build_module, tmp_path):
    """Its launch goes through cuLaunchCooperativeKernel, which keeps every
    block resident and gives the grid barrier its workspace, and
    max_cooperative_grid_blocks() is the driver's occupancy times the SMs."""
    source = tmp_path / "cooperative.py"
    source.write_text(COOPERATIVE_SOURCE)
    result, facts, log = run_host_code(build_module, tmp_path, source, "cooperative", """
        x = host("x", np.arange(256, dtype=np.int32))
        module.rotate[4, 64](x)
        print("BLOCKS", module.rotate.max_cooperative_grid_blocks(64),
              module.rotate.max_cooperative_grid_blocks((8, 8)), module.rotate.cooperative)
    """)
    assert result.returncode == 0, result.stderr
    # The stand-in's device: 108 SMs, each keeping min(32, 2048 / 64) blocks.
    assert "BLOCKS 3456 3456 True" in result.stdout, result.stdout
    facts = facts["facts"]
    assert not calls(log, "cuLaunchKernel"), "a cooperative kernel launched with cuLaunchKernel"
    launches = calls(log, "cuLaunchCooperativeKernel")
    assert len(launches) == 1 and launches[0]["function"] == entry_name("cooperative", "rotate")
    assert launches[0]["grid"] == [4, 1, 1] and launches[0]["block"] == [64, 1, 1]
    occupancy = calls(log, "cuOccupancyMaxActiveBlocksPerMultiprocessor")
    assert [line["blockSize"] for line in occupancy] == [64, 64]
    check_copies_back_and_frees(log, facts, device_pointers(log, facts, launches[0]), launches[0])


def test_a_cooperative_grid_the_device_cannot_hold_fails_with_the_drivers_error(build_module, tmp_path):
    source = tmp_path / "cooperative.py"
    source.write_text(COOPERATIVE_SOURCE)
    result, _, log = run_host_code(build_module, tmp_path, source, "cooperative", """
        x = np.zeros(32 * 4000, dtype=np.int32)
        try:
            module.rotate[4000, 32](x)
        except kiln._runtime.CudaError as error:
            print("ERROR", error.name, error)
    """)
    assert result.returncode == 0, result.stderr
    error = next(line for line in result.stdout.splitlines() if line.startswith("ERROR"))
    assert "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE" in error and "max_cooperative_grid_blocks" in error, error


# On a real GPU (skipped without one).

def real_gpu_available():
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


needs_gpu = pytest.mark.skipif(not real_gpu_available(), reason="needs a CUDA GPU")


@needs_gpu
def test_vector_add_on_a_gpu(build_module, tmp_path):
    result, facts, _ = run_host_code(build_module, tmp_path, EXAMPLES / "vector_add.py", "vector_add", """
        n = 100_000
        x = np.arange(n, dtype=np.float32)
        y = x * 3
        r = np.zeros_like(x)
        module.vector_add[(n + 255) // 256, 256](r, x, y)
        assert np.array_equal(r, x + y)
        data = np.arange(1024, dtype=np.int32)
        module.increment_kernel[4, 256](data, 5)
        assert np.array_equal(data, np.arange(1024, dtype=np.int32) + 5)
    """, stand_in=False)
    assert result.returncode == 0 and facts, result.stderr


@needs_gpu
def test_mandelbrot_on_a_gpu_matches_the_cpu_engine(build_module, tmp_path):
    code = """
        image = np.zeros((96, 144), dtype=np.uint8)
        module.create_fractal[(5, 3), (32, 32)](-2.0, 1.0, -1.0, 1.0, image, 20)
        print("IMAGE " + image.tobytes().hex())
    """
    images = []
    for target in ("cuda", "cpu"):
        result, _, _ = run_host_code(build_module, tmp_path, EXAMPLES / "mandelbrot.py", "mandelbrot", code,
                                     stand_in=False, env={"KILN_TARGET": target})
        assert result.returncode == 0, result.stderr
        images.append(next(line for line in result.stdout.splitlines() if line.startswith("IMAGE")))
    assert images[0] == images[1]


LOADS_SO_FAR = """
import os
def loads_so_far():
    # No log yet: the driver has not been called (the target is chosen at
    # its first use).
    if not os.path.exists(os.environ["KILN_STAND_IN_LOG"]):
        return []
    with open(os.environ["KILN_STAND_IN_LOG"]) as log:
        return [json.loads(line) for line in log if '"cuModuleLoadData"' in line]
"""


def test_an_image_loads_once_at_the_first_launch_of_any_of_its_kernels(build_module, tmp_path):
    # The import loads nothing; the first launch of a kernel loads the fat
    # binary of its image (all of the module's kernels), once, the image the
    # driver picks for the current device; its other kernels only look up
    # their entry in it.
    facts, log = run_ok(build_module, tmp_path, EXAMPLES / "vector_add.py", "vector_add", LOADS_SO_FAR + textwrap.dedent("""
        facts["after_import"] = {"loads": loads_so_far()}
        n = 1000
        r = host("r", np.zeros(n, dtype=np.float32))
        x = host("x", np.arange(n, dtype=np.float32))
        y = host("y", np.arange(n, dtype=np.float32) * 2)
        module.vector_add[4, 256](r, x, y)
        facts["after_first"] = {"loads": loads_so_far()}
        module.vector_add[4, 256](r, x, y)
        module.add_kernel[4, 256](x, y, r)
        facts["after_second"] = {"loads": loads_so_far()}
    """))
    assert facts["after_import"]["loads"] == [], "the import loaded a module into the driver"
    first = facts["after_first"]["loads"]
    every_entry = sorted(entry_name("vector_add", kernel) for kernel in
                         ("add_kernel", "add_kernel_grid", "vector_add", "increment_kernel"))
    assert [sorted(load["entries"]) for load in first] == [every_entry], \
        f"the first launch of vector_add loaded {[load['entries'] for load in first]}"
    assert "80" in first[0]["selected"], f"the driver picked {first[0]['selected']} for an sm_80 device"
    assert facts["after_second"]["loads"] == first, "a later launch loaded the image again"
    looked_up = [line["name"] for line in calls(log, "cuModuleGetFunction")]
    assert looked_up == [entry_name("vector_add", "vector_add"), entry_name("vector_add", "add_kernel")], \
        f"entries looked up: {looked_up}"


def _damaged_copy(folder, tmp_path, kernel):
    """A copy of the built module in `folder` whose fat binary of `kernel`
    (its first specialization) has a flipped byte."""
    copy = tmp_path / "damaged"
    shutil.copytree(folder, copy)
    (so,) = copy.glob("*.so")
    data = bytearray(so.read_bytes())
    start = data.find(b"KILNBNDL")
    _, _, _, manifest_offset, manifest_size, _, payload_offset, _ = struct.unpack_from("<8sIIQQQQQ", data, start)
    manifest = json.loads(bytes(data[start + manifest_offset:start + manifest_offset + manifest_size]))
    fatbin = next(e["fatbin"] for e in manifest["specializations"] if e["name"] == kernel)
    data[start + payload_offset + fatbin["offset"] + fatbin["size"] // 2] ^= 0xFF
    so.write_bytes(bytes(data))
    return copy


def test_a_damaged_image_fails_the_first_launch_of_each_of_its_kernels(build_module, tmp_path):
    folder = _damaged_copy(build_module(EXAMPLES / "vector_add.py", "vector_add"), tmp_path, "add_kernel")
    facts, log = run_ok(lambda source, module: folder, tmp_path, EXAMPLES / "vector_add.py", "vector_add", """
        n = 1000
        r = host("r", np.zeros(n, dtype=np.float32))
        x = host("x", np.arange(n, dtype=np.float32))
        y = host("y", np.arange(n, dtype=np.float32) * 2)
        for attempt, launch in enumerate([lambda: module.add_kernel[4, 256](x, y, r),
                                          lambda: module.add_kernel[4, 256](x, y, r),
                                          lambda: module.vector_add[4, 256](r, x, y)]):
            try:
                launch()
            except RuntimeError as error:
                facts[f"error{attempt}"] = {"message": str(error)}
    """)
    # The kernels share the image, and each names itself in its error.
    for attempt, (kernel, index) in enumerate([("add_kernel", 0), ("add_kernel", 0), ("vector_add", 2)]):
        expected = (f"kiln: module 'vector_add' is damaged: the fat binary of '{kernel}' "
                    f"(specialization {index}) fails its checksum: it is ")
        message = facts.get(f"error{attempt}", {}).get("message", "")
        assert message.startswith(expected) and message.endswith("; rebuild it with kiln build"), \
            f"launch {attempt + 1} of the damaged image said: {message!r}"
    loaded = [line["entries"] for line in calls(log, "cuModuleLoadData")]
    assert loaded == [], f"the driver was handed {loaded}"
    assert calls(log, "cuLaunchKernel") == []