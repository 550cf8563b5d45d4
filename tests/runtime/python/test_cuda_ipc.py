"""CUDA IPC through kiln.cuda, as numba.cuda offers it: a device array's
`get_ipc_handle()`, pickled to another process and opened there
(`with handle as array:`), a context's `get_ipc_handle(memory)`, and
`open_ipc_array` of a raw handle. Against the stand-in CUDA driver, whose
device allocations are shared memory that another process really maps: the
child process reads what the parent wrote and the parent sees what the
child wrote back. (On the CPU engine, IPC says it needs a GPU:
test_numba_cuda_host_api.py.)"""

import textwrap

from test_gpu_path import calls, run_host_code, run_ok

# The child: unpickles what the parent sends on stdin and runs `action`.
CHILD = r'''
import pickle, sys
import numpy as np
import kiln.cuda as cuda
from kiln import _runtime
handle = pickle.load(sys.stdin.buffer)
{action}
'''

OPEN_IN_A_CHILD = """
import os, pickle, subprocess

def in_child(action, handle):
    child = subprocess.run([sys.executable, "-c", CHILD.format(action=action)], input=pickle.dumps(handle),
                           capture_output=True, env=os.environ, timeout=120)
    assert child.returncode == 0, child.stderr.decode()
    return child.stdout.decode()
"""


def run_with_child(build_module, tmp_path, code):
    return run_ok(build_module, tmp_path, None, None,
                  f"CHILD = {CHILD!r}\n" + OPEN_IN_A_CHILD + textwrap.dedent(code))


def test_a_child_process_reads_and_writes_a_device_array_through_its_handle(build_module, tmp_path):
    facts, log = run_with_child(build_module, tmp_path, """
        array = cuda.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
        handle = array.get_ipc_handle()
        seen = in_child(
            "with handle as shared:\\n"
            "    print(shared.shape, shared.dtype, shared.copy_to_host().tolist())\\n"
            "    shared.copy_to_device(np.full((3, 4), -1, np.float32))",
            handle)
        facts["child saw"] = seen.strip()
        facts["parent sees"] = array.copy_to_host().tolist()
    """)
    assert facts["child saw"] == "(3, 4) float32 " + str([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0],
                                                         [8.0, 9.0, 10.0, 11.0]]), "the child read other bytes"
    assert facts["parent sees"] == [[-1.0] * 4] * 3, "the child's write did not reach the parent's array"
    opened = calls(log, "cuIpcOpenMemHandle_v2")
    assert len(opened) == 1 and len(calls(log, "cuIpcCloseMemHandle")) == 1, "open and close once each"
    assert opened[0]["Flags"] == 1, "IPC memory opens with CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS"


def test_a_view_shares_from_its_first_element(build_module, tmp_path):
    facts, _ = run_with_child(build_module, tmp_path, """
        array = cuda.to_device(np.arange(20, dtype=np.int64))
        view = array[5:15:2]
        seen = in_child("with handle as shared:\\n    print(shared.copy_to_host().tolist())",
                        view.get_ipc_handle())
        facts["child saw"] = seen.strip()
    """)
    assert facts["child saw"] == "[5, 7, 9, 11, 13]", "the view's offset or strides were lost on the way"


def test_memory_handles_and_raw_handles_open_too(build_module, tmp_path):
    facts, _ = run_with_child(build_module, tmp_path, """
        array = cuda.to_device(np.arange(8, dtype=np.int32))
        context = cuda.current_context()
        memory = context.memalloc(64)
        cuda.to_device(np.arange(16, dtype=np.int32),
                       to=cuda.devicearray.DeviceNDArray.over_memory(memory, 16, np.int32))
        memory_handle = context.get_ipc_handle(memory)
        facts["memory"] = in_child(
            "pointer = handle.open(cuda.current_context())\\n"
            "host = np.zeros(16, np.int32)\\n"
            "_runtime.copy_to_host(host, pointer.device_pointer.value, 64)\\n"
            "print(host.tolist())\\n"
            "handle.close()", memory_handle).strip()
        raw = array.get_ipc_handle()._ipc_handle.handle
        facts["raw"] = in_child(
            "with cuda.open_ipc_array(handle, (2, 3), np.int32, offset=8) as shared:\\n"
            "    print(shared.copy_to_host().tolist())", raw).strip()
    """)
    assert facts["memory"] == str(list(range(16))), "a context's memory handle opened other bytes"
    assert facts["raw"] == "[[2, 3, 4], [5, 6, 7]]", "open_ipc_array's offset or shape was not honoured"


def test_misuse_says_what_is_wrong(build_module, tmp_path):
    result, facts, log = run_host_code(build_module, tmp_path, None, None, """
        import pickle
        array = cuda.to_device(np.ones(4))
        handle = array.get_ipc_handle()
        errors = []
        for attempt in (lambda: handle.open(), lambda: handle.close(),
                        lambda: pickle.loads(pickle.dumps(handle)).open()):
            try:
                attempt()
                errors.append("no error")
            except Exception as error:
                errors.append(f"{type(error).__name__}: {error}")
        facts["errors"] = errors
    """)
    assert result.returncode == 0 and facts, result.stderr
    errors = facts["facts"]["errors"]
    assert errors[0].startswith("ValueError: opening IpcHandle from original process"), errors[0]
    assert errors[1] == "ValueError: IpcHandle not opened", errors[1]
    assert "cuIpcOpenMemHandle failed: CUDA_ERROR_INVALID_CONTEXT" in errors[2], (
        f"opening a handle in the process that made it must fail as the driver says: {errors[2]}")
