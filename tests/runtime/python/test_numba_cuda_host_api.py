"""kiln.cuda as a drop-in for numba.cuda's host API: every public name of
numba.cuda either works or says why Kiln has no such thing; devices and
contexts (`cuda.gpus`, `current_context()`, `close()`), mapped, managed and
hinted (In/Out/InOut) memory, foreign arrays, external memory managers and
the driver-level modules packages import. On the CPU engine (device 0)
here, and on the GPU path against the stand-in driver."""

import numpy as np
import pytest

import kiln
import kiln.cuda as cuda
from test_gpu_path import calls, run_ok

NUMBA_CUDA = pytest.importorskip("numba.cuda")


def public_names():
    return sorted(name for name in dir(NUMBA_CUDA) if not name.startswith("_"))


@pytest.mark.parametrize("name", public_names())
def test_every_public_name_of_numba_cuda_works_or_says_why_not(name):
    try:
        getattr(cuda, name)
    except AttributeError as error:
        message = str(error)
        assert message.startswith(f"kiln.cuda has no {name!r}: "), (
            f"kiln.cuda.{name} is missing without saying why: {message}")
        assert len(message) > 80 and "instead" in message.lower(), (
            f"kiln.cuda.{name}'s error does not say what to do instead: {message}")
        return


def test_every_name_kiln_cuda_exports_resolves():
    for name in cuda.__all__:
        assert getattr(cuda, name) is not None, name


# --- devices and contexts -------------------------------------------------


def test_the_cpu_engine_is_device_0_of_one():
    assert len(cuda.gpus) == 1 and len(cuda.list_devices()) == 1
    assert [device.id for device in cuda.gpus] == [0]
    device = cuda.gpus[0]
    assert device.compute_capability == cuda.get_current_device().compute_capability
    assert device.MULTIPROCESSOR_COUNT >= 1 and device.WARP_SIZE == 32 and device.MAX_BLOCK_DIM_Z == 64
    assert str(device) == "<Managed Device 0>"
    assert cuda.gpus.current is not None and cuda.gpus.current.id == 0
    with pytest.raises(IndexError, match="Kiln runs kernels on one device .* there is no device 1"):
        cuda.gpus[1]


def test_with_gpus_runs_the_block_on_device_0():
    with cuda.gpus[0]:
        array = cuda.to_device(np.arange(4))
        assert cuda.current_context().device.id == 0
    np.testing.assert_array_equal(array.copy_to_host(), np.arange(4))


def test_a_device_attribute_kiln_does_not_read_says_which_it_reads():
    with pytest.raises(AttributeError, match="does not read the device attribute ECC_ENABLED: it knows .*WARP_SIZE"):
        cuda.get_current_device().ECC_ENABLED


def test_the_context_reports_memory_and_has_no_pending_frees():
    context = cuda.current_context()
    assert context is cuda.current_context(0)
    free, total = context.get_memory_info()
    assert 0 < free <= total, (free, total)
    assert isinstance(context.get_memory_info(), cuda.MemoryInfo)
    context.deallocations.clear()
    assert len(context.deallocations) == 0
    with context.deallocations.disable():
        assert context.deallocations.is_disabled
    context.reset()
    with pytest.raises(ValueError, match="no context of device 3"):
        cuda.current_context(3)


def test_memalloc_gives_memory_pointers_that_views_share():
    pointer = cuda.current_context().memalloc(64)
    assert pointer.size == 64 and int(pointer.device_pointer) == pointer.device_pointer.value != 0
    pointer.memset(7)
    view = pointer.view(16, 32)
    assert view.size == 16 and view.device_pointer.value == pointer.device_pointer.value + 16
    assert view.owner is pointer.owner
    with pytest.raises(RuntimeError, match="negative"):
        pointer.view(32, 16)


def test_close_forgets_the_current_device_until_it_is_used_again():
    cuda.close()
    assert cuda.gpus.current is None
    cuda.to_device(np.ones(2))  # the runtime keeps working
    cuda.current_context()
    assert cuda.gpus.current is not None


def test_require_context_decorates_a_function():
    @cuda.require_context
    def answer(x):
        return x + 1

    assert answer(41) == 42 and answer.__name__ == "answer"


def test_what_the_device_supports():
    assert cuda.is_float16_supported() is True
    device = cuda.get_current_device()
    assert cuda.is_bfloat16_supported() == (device.target == "cpu" or device.compute_capability >= (8, 0)), \
        "the CPU engine runs bfloat16 kernels whatever compute capability it reports"
    assert cuda.is_fp8_supported() == (device.target == "cpu" or device.compute_capability >= (8, 9)), \
        "the CPU engine runs FP8 kernels whatever compute capability it reports"
    assert cuda.is_available() and cuda.is_supported_version() and cuda.cuda_error() is None
    assert cuda.runtime.get_version() == (-1, -1), "the CPU engine has no CUDA version, as the simulator"
    assert cuda.driver.driver.get_device_count() == 1 and cuda.driver.driver.is_available


# --- memory ---------------------------------------------------------------


@cuda.jit
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2


def test_managed_arrays_are_host_arrays_kernels_use_in_place():
    array = cuda.managed_array((2, 4), np.int32)
    assert isinstance(array, np.ndarray) and isinstance(array, cuda.ManagedNDArray)
    array[:] = np.arange(8).reshape(2, 4)
    double[1, 8](array.reshape(8))
    np.testing.assert_array_equal(array, np.arange(8).reshape(2, 4) * 2)
    interface = array[1].__cuda_array_interface__
    assert interface["data"][0] == array.__array_interface__["data"][0] + 16


def test_mapped_gives_device_views_of_host_arrays():
    first, second = np.ones(4), np.arange(4.0)
    with cuda.mapped(first) as device:
        assert isinstance(device, cuda.DeviceNDArray)
        double[1, 4](device)
    with cuda.mapped(first, second) as devices:
        assert len(devices) == 2
        double[1, 4](devices[1])
    np.testing.assert_array_equal(first, [2.0] * 4)
    np.testing.assert_array_equal(second, np.arange(4.0) * 2)


@pytest.mark.parametrize("hint", ["In", "Out", "InOut"])
def test_a_kernels_first_call_takes_an_argument_hint(hint):
    @cuda.jit
    def negate(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = -a[i]

    host = np.arange(4, dtype=np.int32)
    negate[1, 4](getattr(cuda, hint)(host))
    np.testing.assert_array_equal(host, -np.arange(4), err_msg="the hint's array must type the kernel's first call")


@pytest.mark.parametrize("hint", ["In", "Out", "InOut"])
def test_argument_hints_pass_host_arrays_in_place_on_the_cpu_engine(hint):
    host = np.ones(4)
    double[1, 4](getattr(cuda, hint)(host))
    np.testing.assert_array_equal(host, [2.0] * 4)


def test_from_cuda_array_interface_keeps_its_owner():
    device = cuda.to_device(np.arange(6.0))
    owner = type("Owner", (), {})()
    view = cuda.from_cuda_array_interface(device.__cuda_array_interface__, owner=owner)
    np.testing.assert_array_equal(view.copy_to_host(), np.arange(6.0))
    assert view.owner is owner


def test_ipc_on_the_cpu_engine_says_it_needs_a_gpu_and_what_to_do():
    with pytest.raises(RuntimeError, match="CUDA IPC needs a GPU.*share the data through host memory"):
        cuda.to_device(np.ones(2)).get_ipc_handle()
    with pytest.raises(RuntimeError, match="CUDA IPC needs a GPU"):
        with cuda.open_ipc_array(bytes(64), 4, np.float32):
            pass
    with pytest.raises(ValueError, match="a CUDA IPC handle is 64 bytes, not 6"):
        with cuda.open_ipc_array(b"handle", 4, np.float32):
            pass
    with pytest.raises(ValueError, match="empty device memory .* has no IPC handle"):
        cuda.device_array(0).get_ipc_handle()


# A memory manager plugin that allocates with Kiln's runtime and counts: the
# tests define it here and in the processes they run on the GPU path.
COUNTING_PLUGIN = """
import ctypes

import kiln.cuda as cuda
from kiln import _runtime


class CountingPlugin(cuda.HostOnlyCUDAMemoryManager):
    allocations = []

    def initialize(self):
        pass

    def memalloc(self, size):
        buffer = _runtime.DeviceBuffer(size)
        self.allocations.append(size)
        return cuda.MemoryPointer(self.context, ctypes.c_void_p(buffer.pointer), size,
                                  finalizer=lambda buffer=buffer: None)

    def get_memory_info(self):
        return cuda.MemoryInfo(5, 10)

    def get_ipc_handle(self, memory):
        raise NotImplementedError

    @property
    def interface_version(self):
        return 1
"""


def _counting_plugin():
    namespace = {}
    exec(COUNTING_PLUGIN, namespace)
    return namespace["CountingPlugin"]


_CountingPlugin = _counting_plugin()


def test_a_memory_manager_of_another_interface_version_is_refused():
    class Future(_CountingPlugin):
        @property
        def interface_version(self):
            return 2

    with pytest.raises(RuntimeError, match="version 2 - version 1 required"):
        cuda.set_memory_manager(Future)


def test_a_memory_manager_on_the_cpu_engine_warns_and_leaves_allocation_to_the_host():
    try:
        with pytest.warns(RuntimeWarning, match="on the CPU engine device memory is host memory"):
            cuda.set_memory_manager(_CountingPlugin)
        np.testing.assert_array_equal(cuda.to_device(np.arange(3)).copy_to_host(), np.arange(3))
        assert _CountingPlugin.allocations == []
    finally:
        from kiln.cuda import memory_manager

        memory_manager._plugin_class = None


# --- exceptions, declarations, modules ------------------------------------


def test_the_exceptions_packages_catch():
    assert issubclass(cuda.KernelRuntimeError, RuntimeError)
    assert issubclass(cuda.CudaSupportError, ImportError)
    assert cuda.cudadrv.driver.CudaAPIError is kiln.CudaError
    assert cuda.cudadrv.error.CudaSupportError is cuda.CudaSupportError
    assert "thread=(1, 0, 0) block=(2, 0, 0)" in str(cuda.KernelRuntimeError("boom", (1, 0, 0), (2, 0, 0)))


def test_a_declared_device_function_is_for_kernels_only():
    external = cuda.declare_device("mul_add", "float32(float32, float32, float32)", link=["mul_add.cu"])
    assert external.name == "mul_add" and external.link == ["mul_add.cu"]
    with pytest.raises(TypeError, match="only kernels and device functions can call it"):
        external(1.0, 2.0, 3.0)


def test_linkable_code_reads_files_by_their_extension(tmp_path):
    (tmp_path / "f.ptx").write_text(".version 8.0")
    code = cuda.LinkableCode.from_path(str(tmp_path / "f.ptx"))
    assert isinstance(code, cuda.PTXSource) and code.data == ".version 8.0" and code.name == "f"
    with pytest.raises(ValueError, match="extension is not one of"):
        cuda.LinkableCode.from_path(str(tmp_path / "f.txt"))


def test_numba_settings_kiln_does_not_read_say_so():
    assert cuda.config.ENABLE_CUDASIM == 0, "Kiln's CPU engine runs compiled kernels, not the simulator"
    with pytest.raises(AttributeError, match="Kiln does not read Numba's setting CUDA_LOG_LEVEL"):
        cuda.config.CUDA_LOG_LEVEL


def test_compiler_modules_say_kiln_replaces_them():
    with pytest.raises(AttributeError, match="numba.cuda.codegen is part of Numba's compiler"):
        cuda.codegen
    with pytest.raises(AttributeError, match="import os instead"):
        cuda.os


# --- the GPU path, against the stand-in driver -----------------------------

GPU_KERNELS = '''
from numba import cuda


@cuda.jit("void(float64[::1])")
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2
'''


@pytest.fixture
def gpu_kernels(tmp_path):
    source = tmp_path / "hinted.py"
    source.write_text(GPU_KERNELS)
    return source


def _copies_around(log):
    launch = calls(log, "cuLaunchKernel")[-1]
    before = [line for line in calls(log, "cuMemcpyHtoDAsync_v2") if line["seq"] < launch["seq"]]
    after = [line for line in calls(log, "cuMemcpyDtoHAsync_v2") if line["seq"] > launch["seq"]]
    return len(before), len(after)


@pytest.mark.parametrize("hint, copies", [("In", (1, 0)), ("Out", (0, 1)), ("InOut", (1, 1))])
def test_argument_hints_choose_the_copies_on_a_gpu(build_module, tmp_path, gpu_kernels, hint, copies):
    _, log = run_ok(build_module, tmp_path, gpu_kernels, "hinted", f"""
        host = np.ones(256)
        module.double[1, 256](cuda.{hint}(host))
    """)
    assert _copies_around(log) == copies, f"cuda.{hint}: (copies in, copies back) {_copies_around(log)}"


def test_a_memory_manager_allocates_device_arrays_on_a_gpu(build_module, tmp_path, gpu_kernels):
    facts, log = run_ok(build_module, tmp_path, gpu_kernels, "hinted", COUNTING_PLUGIN + """
cuda.set_memory_manager(CountingPlugin)
array = device("array", cuda.to_device(np.ones(256)))
module.double[1, 256](array)
assert CountingPlugin.allocations == [2048], CountingPlugin.allocations
assert tuple(cuda.current_context().get_memory_info()) == (5, 10)
""")
    launch = calls(log, "cuLaunchKernel")[-1]
    assert launch["params"][0]["hex"] == facts["array"]["pointer"].to_bytes(8, "little").hex(), (
        "the launch must pass the plugin's allocation")


def test_memory_information_and_managed_arrays_on_a_gpu(build_module, tmp_path, gpu_kernels):
    _, log = run_ok(build_module, tmp_path, gpu_kernels, "hinted", """
        free, total = cuda.current_context().get_memory_info()
        assert 0 < free <= total, (free, total)
        array = cuda.managed_array(256, np.float64)
        array[:] = 1.0
        module.double[1, 256](array)
        assert cuda.runtime.get_version() == (13, 0)
    """)
    assert calls(log, "cuMemAllocManaged"), "managed_array must allocate managed memory"
    assert not calls(log, "cuMemcpyHtoDAsync_v2"), "a managed array is used in place, not copied"
