"""kiln._runtime's memory_info(), driver_version() and DeviceBuffer(managed=True):
what numba.cuda's get_memory_info(), managed_array and driver version need.

On the CPU target the tests run in this process (conftest.py sets
KILN_TARGET=cpu); against the stand-in CUDA driver (tests/runtime/stand_in_driver:
a test stand-in that simulates one device on host memory) they run in a child
process, as the runtime picks its target and loads the driver once per
process, and check the stand-in's call log.
"""

import ctypes
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kiln import _runtime

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILD_DIR = pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO_ROOT / "build"))
PACKAGE_DIR = BUILD_DIR / "python"
STAND_IN = BUILD_DIR / "tests" / "runtime" / "stand_in_driver" / "libkiln_stand_in_cuda_driver.so"

STAND_IN_MEMORY = 16 << 30  # what the stand-in's device has

on_cpu = pytest.mark.skipif(_runtime.target() != "cpu", reason="the CPU target's tests (KILN_TARGET=cpu)")


# --- the CPU target, in this process ---------------------------------------


@on_cpu
def test_cpu_memory_info_is_the_hosts_memory():
    info = _runtime.memory_info()
    assert isinstance(info, tuple) and len(info) == 2
    free, total = info
    assert type(free) is int and type(total) is int
    assert 0 < free <= total
    assert total == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert total == _runtime.device_info()["total_memory"]


@on_cpu
def test_cpu_has_no_driver_version():
    assert _runtime.driver_version() is None


@on_cpu
def test_cpu_managed_buffer_is_host_memory():
    buffer = _runtime.DeviceBuffer(64, managed=True)
    assert buffer.nbytes == 64
    assert buffer.pointer != 0
    assert "managed memory" in repr(buffer)
    # The host reads and writes it in place, through its pointer.
    view = np.ctypeslib.as_array((ctypes.c_uint8 * 64).from_address(buffer.pointer))
    view[:] = np.arange(64, dtype=np.uint8)
    back = np.zeros(64, dtype=np.uint8)
    _runtime.copy_to_host(back, buffer.pointer, 64)
    np.testing.assert_array_equal(back, np.arange(64, dtype=np.uint8))


@on_cpu
def test_cpu_empty_managed_buffer_allocates_nothing():
    buffer = _runtime.DeviceBuffer(0, managed=True)
    assert buffer.pointer == 0 and buffer.nbytes == 0


@on_cpu
def test_managed_is_keyword_only_and_defaults_to_false():
    assert "managed memory" not in repr(_runtime.DeviceBuffer(8))
    assert "managed memory" not in repr(_runtime.DeviceBuffer(8, managed=False))
    with pytest.raises(TypeError):
        _runtime.DeviceBuffer(8, True)


# --- the CUDA target, against the stand-in driver --------------------------


def run_on_stand_in(tmp_path, code, env=None):
    """Runs `code` with KILN_TARGET=cuda on the stand-in; returns (result, facts, log)."""
    if not STAND_IN.exists():
        pytest.fail(f"the stand-in CUDA driver is not built at {STAND_IN}")
    log = tmp_path / "stand_in.jsonl"
    environment = {name: value for name, value in os.environ.items() if not name.startswith("KILN_STAND_IN_")}
    environment.update({"KILN_TARGET": "cuda", "PYTHONPATH": str(PACKAGE_DIR), "KILN_CUDA_DRIVER": str(STAND_IN),
                        "KILN_STAND_IN_LOG": str(log)})
    environment.update(env or {})
    script = "import ctypes, json\nfrom kiln import _runtime\nfacts = {}\n" + textwrap.dedent(code) + \
        '\nprint("FACTS " + json.dumps(facts))\n'
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                            timeout=120)
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    facts = None
    for line in result.stdout.splitlines():
        if line.startswith("FACTS "):
            facts = json.loads(line[len("FACTS "):])
    assert result.returncode == 0 and facts is not None, f"host code failed:\n{result.stdout}\n{result.stderr}"
    return facts, lines


def calls(log, name):
    return [line for line in log if line["call"] == name]


def test_stand_in_memory_info_and_driver_version(tmp_path):
    facts, log = run_on_stand_in(tmp_path, """
        facts["target"] = _runtime.target()
        facts["before"] = _runtime.memory_info()
        facts["types"] = [type(value).__name__ for value in facts["before"]]
        buffer = _runtime.DeviceBuffer(1 << 20)
        facts["during"] = _runtime.memory_info()
        del buffer
        facts["after"] = _runtime.memory_info()
        facts["version"] = _runtime.driver_version()
    """)
    assert facts["target"] == "cuda"
    assert facts["types"] == ["int", "int"]
    assert facts["before"] == [STAND_IN_MEMORY, STAND_IN_MEMORY]
    assert facts["during"] == [STAND_IN_MEMORY - (1 << 20), STAND_IN_MEMORY]
    assert facts["after"] == facts["before"]
    assert facts["version"] == [13, 0]
    queries = calls(log, "cuMemGetInfo_v2")
    assert len(queries) == 3
    failed = [line for line in log if line["result"] != "CUDA_SUCCESS"]
    assert not failed, failed


def test_stand_in_managed_buffer_is_the_managed_allocation(tmp_path):
    facts, log = run_on_stand_in(tmp_path, """
        buffer = _runtime.DeviceBuffer(4096, managed=True)
        facts["pointer"] = buffer.pointer
        facts["repr"] = repr(buffer)
        facts["free"] = _runtime.memory_info()[0]
        # Managed memory is host-accessible: write it in place, read it back
        # with the device's copy.
        ctypes.memset(buffer.pointer, 0x3c, 4096)
        back = bytearray(4096)
        _runtime.copy_to_host(back, buffer.pointer, 4096)
        facts["back"] = sorted(set(back))
        del buffer
        facts["plain"] = _runtime.DeviceBuffer(16).pointer != 0
    """)
    managed = calls(log, "cuMemAllocManaged")
    assert len(managed) == 1
    assert managed[0]["bytesize"] == 4096
    assert managed[0]["flags"] == 1  # CU_MEM_ATTACH_GLOBAL
    assert managed[0]["dptr"] == facts["pointer"]
    assert "4096 bytes of managed memory" in facts["repr"]
    assert facts["free"] == STAND_IN_MEMORY - 4096
    assert facts["back"] == [0x3c]
    frees = [line["dptr"] for line in calls(log, "cuMemFree_v2")]
    assert frees[0] == facts["pointer"]
    # A plain buffer still comes from cuMemAlloc.
    assert facts["plain"] and len(calls(log, "cuMemAlloc_v2")) == 1
    assert all(line["result"] == "CUDA_SUCCESS" for line in log)


def test_stand_in_without_managed_memory_says_so(tmp_path):
    facts, log = run_on_stand_in(tmp_path, """
        try:
            _runtime.DeviceBuffer(4096, managed=True)
        except RuntimeError as error:
            facts["error"] = [type(error).__name__, str(error)]
    """, env={"KILN_STAND_IN_MANAGED_MEMORY": "0"})
    kind, message = facts["error"]
    assert kind == "RuntimeError"
    assert "managed memory is not supported on device 0" in message
    assert "CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 0" in message
    assert "device_array" in message and "mapped_array" in message
    assert not calls(log, "cuMemAllocManaged")
    asked = [line for line in calls(log, "cuDeviceGetAttribute") if line["attrib"] == 83]
    assert len(asked) == 1 and asked[0]["pi"] == 0


def test_stand_in_driver_errors_become_cuda_errors(tmp_path):
    facts, _ = run_on_stand_in(tmp_path, """
        for name, call in [("memory_info", _runtime.memory_info),
                           ("managed", lambda: _runtime.DeviceBuffer(64, managed=True))]:
            try:
                call()
            except _runtime.CudaError as error:
                facts[name] = [error.name, str(error)]
    """, env={"KILN_STAND_IN_FAIL": "cuMemGetInfo_v2=CUDA_ERROR_INVALID_CONTEXT,"
                                    "cuMemAllocManaged=CUDA_ERROR_OUT_OF_MEMORY"})
    assert facts["memory_info"][0] == "CUDA_ERROR_INVALID_CONTEXT"
    assert facts["memory_info"][1].startswith("cuMemGetInfo failed: CUDA_ERROR_INVALID_CONTEXT")
    assert facts["managed"][0] == "CUDA_ERROR_OUT_OF_MEMORY"
    assert "allocating 64 bytes of managed memory" in facts["managed"][1]
