"""The device check's host API step: kiln.cuda, Kiln's numba.cuda-style
host API, on the device, in the environment the device check installs the
kiln-runtime wheel into (no compiler, no Numba needed).

    python3 scripts/gpu_check/host_api_checks.py KERNELS --target cuda|cpu

KERNELS is the folder holding the built module of
scripts/gpu_check/kernels/host_api_kernels.py. Every check runs, whatever
the others did, and is recorded as passed, failed (with the error) or
skipped (with the reason); results are compared with NumPy's. The last line
printed is the JSON of {check: {"status": ..., "message" | "reason" |
"details": ...}}.

On the CPU engine (--target cpu, the dry run) the checks that only a GPU
can answer (mapped memory, IPC, CuPy's and PyTorch's GPU arrays) are
skipped, saying why.
"""

import argparse
import json
import pickle
import subprocess
import sys

import numpy as np

BLOCK = 256
ELEMENTS = 1 << 20
IPC_CHILD_TIMEOUT_S = 60

CHECKS = []


def check(gpu_only=None, library=None):
    """Registers a check. `gpu_only`: why it is skipped on the CPU engine;
    `library`: the module it needs, passed to it as its last argument
    (skipped where it does not import)."""

    def register(function):
        CHECKS.append((function.__name__, function, gpu_only, library))
        return function

    return register


def grid(elements):
    return (elements + BLOCK - 1) // BLOCK


def expect_equal(got, expected, what):
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        raise AssertionError(f"{what}: shape {got.shape}, where NumPy's is {expected.shape}")
    if not np.array_equal(got, expected):
        difference = np.flatnonzero(got.ravel() != expected.ravel())
        raise AssertionError(f"{what}: {difference.size} elements differ from NumPy's, the first at "
                             f"{difference[:1].tolist()}")


def sample(elements=ELEMENTS):
    return np.random.default_rng(7).random(elements, dtype=np.float32)


def scale_on_a_stream(cuda, kernels, host, result, factor):
    """result = host * factor, by the scale kernel on a stream of its own
    between asynchronous copies; returns when the stream has finished."""
    stream = cuda.stream()
    source = cuda.to_device(host, stream=stream)
    out = cuda.device_array_like(source, stream=stream)
    kernels.scale[grid(host.size), BLOCK, stream](source, out, factor)
    out.copy_to_host(result, stream=stream)
    stream.synchronize()


@check()
def device_arrays(cuda, kernels):
    host = sample(4096)
    device = cuda.to_device(host)
    expect_equal(device.copy_to_host(), host, "to_device, then copy_to_host")
    written = cuda.device_array(host.shape, np.float32)
    written.copy_to_device(host[::-1].copy())
    expect_equal(written.copy_to_host(), host[::-1], "device_array filled by copy_to_device")
    expect_equal(device[100:200].copy_to_host(), host[100:200], "a slice")
    expect_equal(device[::3].copy_to_host(), host[::3], "a strided view")
    out = cuda.to_device(np.zeros_like(host))
    # A kernel reads a strided view and writes into a slice of another array.
    kernels.scale[grid(2048), BLOCK](device[::2], out[1024:3072], 2.0)
    cuda.synchronize()
    expected = np.zeros_like(host)
    expected[1024:3072] = host[::2] * np.float32(2)
    expect_equal(out.copy_to_host(), expected, "a kernel from a strided view into a slice")
    device[:10] = np.full(10, -1, np.float32)
    expect_equal(device.copy_to_host()[:12], np.concatenate([np.full(10, -1, np.float32), host[10:12]]),
                 "assigning to a slice")


@check()
def stream_launch_and_async_copies(cuda, kernels):
    host = sample()
    result = np.empty_like(host)
    scale_on_a_stream(cuda, kernels, host, result, 3.0)
    expect_equal(result, host * np.float32(3), "a kernel on a stream between asynchronous copies")


@check()
def events(cuda, kernels):
    host = sample()
    stream = cuda.stream()
    source = cuda.to_device(host, stream=stream)
    out = cuda.device_array_like(source, stream=stream)
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    for _ in range(10):
        kernels.scale[grid(host.size), BLOCK, stream](source, out, 1.5)
    end.record(stream)
    end.synchronize()
    if not end.query():
        raise AssertionError("the end event is not complete after its synchronize()")
    elapsed = cuda.event_elapsed_time(start, end)
    if not elapsed > 0:
        raise AssertionError(f"ten launches between the events took {elapsed} ms")
    return {"elapsed_ms_for_10_launches": round(elapsed, 4)}


@check()
def pinned_array(cuda, kernels):
    host = sample()
    pinned_in = cuda.pinned_array(host.shape, np.float32)
    pinned_in[:] = host
    pinned_out = cuda.pinned_array_like(pinned_in)
    scale_on_a_stream(cuda, kernels, pinned_in, pinned_out, 2.0)
    expect_equal(pinned_out, host * np.float32(2), "asynchronous copies from and to pinned_array memory")


@check()
def pinned_context(cuda, kernels):
    host = sample()
    result = np.zeros_like(host)
    with cuda.pinned(host, result):
        scale_on_a_stream(cuda, kernels, host, result, 0.5)
    expect_equal(result, host * np.float32(0.5), "asynchronous copies inside cuda.pinned()")


@check(gpu_only="on the CPU engine device memory is host memory, so there is nothing to map")
def mapped_array(cuda, kernels):
    host = sample()
    mapped = cuda.mapped_array(host.shape, np.float32)
    mapped[:] = 0
    kernels.scale[grid(host.size), BLOCK](cuda.to_device(host), mapped, 4.0)
    cuda.synchronize()
    expect_equal(mapped, host * np.float32(4), "mapped_array written by a kernel, read on the host")


@check(gpu_only="CuPy's arrays live in GPU memory", library="cupy")
def cupy_array_into_kiln_kernel(cuda, kernels, cupy):
    host = sample()
    source = cupy.asarray(host)
    out = cupy.zeros_like(source)
    cupy.cuda.Device().synchronize()
    kernels.scale[grid(host.size), BLOCK](source, out, 2.0)
    cuda.synchronize()
    expect_equal(cupy.asnumpy(out), host * np.float32(2), "a Kiln kernel on CuPy arrays "
                                                           "(__cuda_array_interface__)")


@check(gpu_only="CuPy's arrays live in GPU memory", library="cupy")
def kiln_array_into_cupy(cuda, kernels, cupy):
    host = sample()
    device = cuda.to_device(host)
    viewed = cupy.asarray(device)
    expect_equal(cupy.asnumpy(viewed), host, "cupy.asarray of a Kiln device array")
    viewed *= 2
    cupy.cuda.Device().synchronize()
    expect_equal(device.copy_to_host(), host * np.float32(2),
                 "the Kiln array after CuPy doubled its view (shared memory, no copy)")


@check(gpu_only="PyTorch's CUDA tensors live in GPU memory", library="torch")
def torch_tensor_into_kiln_kernel(cuda, kernels, torch):
    from torch.utils import dlpack

    host = sample()
    source = torch.from_numpy(host).cuda()
    out = torch.zeros_like(source)
    torch.cuda.synchronize()
    # DLPack capsules, not the tensors: Kiln would take a tensor through
    # its __cuda_array_interface__, and DLPack is what this checks.
    kernels.scale[grid(host.size), BLOCK](dlpack.to_dlpack(source), dlpack.to_dlpack(out), 2.0)
    cuda.synchronize()
    expect_equal(out.cpu().numpy(), host * np.float32(2), "a Kiln kernel on PyTorch tensors (DLPack)")


@check(gpu_only="PyTorch's CUDA tensors live in GPU memory", library="torch")
def kiln_array_into_torch(cuda, kernels, torch):
    host = sample()
    device = cuda.to_device(host)
    tensor = torch.from_dlpack(device)
    expect_equal(tensor.cpu().numpy(), host, "torch.from_dlpack of a Kiln device array")
    tensor.mul_(2)
    torch.cuda.synchronize()
    expect_equal(device.copy_to_host(), host * np.float32(2),
                 "the Kiln array after PyTorch doubled its tensor (shared memory, no copy)")


@check(gpu_only="CUDA IPC shares GPU memory between processes")
def ipc(cuda, kernels):
    host = sample(4096)
    device = cuda.to_device(host)
    handle = device.get_ipc_handle()
    child = subprocess.run([sys.executable, __file__, "--open-ipc"], input=pickle.dumps(handle),
                           capture_output=True, timeout=IPC_CHILD_TIMEOUT_S)
    if child.returncode != 0:
        raise AssertionError(f"the child process could not open the handle: "
                             f"{child.stderr.decode(errors='replace')[-500:]}")
    expect_equal(np.array(json.loads(child.stdout), dtype=np.float32), host,
                 "what a child process read through the IPC handle")


def open_ipc_handle_from_stdin():
    """The IPC check's child: opens the pickled handle, prints the values."""
    handle = pickle.loads(sys.stdin.buffer.read())
    with handle as array:
        print(json.dumps(array.copy_to_host().tolist()))


def run_check(function, gpu_only, library, target, cuda, kernels):
    if gpu_only and target != "cuda":
        return {"status": "skipped", "reason": f"needs a GPU: {gpu_only}"}
    arguments = [cuda, kernels]
    if library:
        try:
            arguments.append(__import__(library))
        except Exception as error:  # a library that is missing or broken is a reason to skip
            return {"status": "skipped",
                    "reason": f"{library} does not import: {type(error).__name__}: {error}"}
        if library == "torch" and not arguments[-1].cuda.is_available():
            return {"status": "skipped", "reason": "PyTorch sees no CUDA device"}
    try:
        details = function(*arguments)
    except Exception as error:  # every check runs; a failure is recorded with its error
        return {"status": "failed", "message": f"{type(error).__name__}: {str(error)[:800]}"}
    return {"status": "passed", **({"details": details} if details else {})}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernels", nargs="?")
    parser.add_argument("--target", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--open-ipc", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.open_ipc:
        open_ipc_handle_from_stdin()
        return 0
    sys.path.insert(0, args.kernels)
    import host_api_kernels
    import kiln.cuda

    results = {name: run_check(function, gpu_only, library, args.target, kiln.cuda, host_api_kernels)
               for name, function, gpu_only, library in CHECKS}
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
