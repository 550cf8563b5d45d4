"""Device functions written in CUDA C/C++ (`cuda.declare_device(...,
link=...)`) on the CPU engine: clang compiles the file as host C++ and the
kernels that call its functions run them as a GPU would, cffi's
`ffi.from_buffer` handing them an array's data. Code only a GPU runs is an
error when its call runs, naming the file and why. `#include <...>` folders
come from kiln.cuda.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS, and for `kiln
build` from --link-include; an edited .cu file is compiled again, not
taken from the cache."""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import TEST_ARCH

FUNCTIONS_CU = '''
extern "C" __device__ int mul_f32_f32(float *result, float x, float y) {
  *result = x * y;
  return 0;
}

extern "C" __device__ int sum_reduce(float *result, float *array, int n) {
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i)
    sum += array[i];
  *result = (float)sum;
  return 0;
}
'''

DECLARED = '''
import os

import cffi
from kiln import cuda

mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link="functions.cu")
sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                 link=["functions.cu"])
ffi = cffi.FFI()


@cuda.jit
def multiply(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = mul(x[i], y[i])


@cuda.jit
def total(result, array):
    result[0] = sum_reduce(ffi.from_buffer(array), len(array))


@cuda.jit
def total_of_every_other(result, array):
    result[0] = sum_reduce(ffi.from_buffer(array[::2]), len(array))


def scaler(folder):
    """A kernel declared inside a function, its file's path computed there."""
    scale = cuda.declare_device("mul_f32_f32", "float32(float32, float32)",
                                link=os.path.join(folder, "functions.cu"))

    @cuda.jit
    def scaled(r, x):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = scale(x[i], 3.0)

    return scaled
'''


@pytest.fixture
def declared(source_module, tmp_path):
    pytest.importorskip("cffi")
    (tmp_path / "functions.cu").write_text(FUNCTIONS_CU)
    return source_module("declared_cu", DECLARED)


def test_a_kernel_runs_the_function_a_cu_file_defines(declared):
    x = np.random.default_rng(1).random(32).astype(np.float32)
    y = np.random.default_rng(2).random(32).astype(np.float32)
    r = np.zeros_like(x)
    declared.multiply[1, 32](r, x, y)
    np.testing.assert_array_equal(r, x * y)


def test_a_function_declared_inside_a_function_links_the_file_its_path_names(declared, tmp_path):
    x = np.arange(10, dtype=np.float32)
    r = np.zeros_like(x)
    declared.scaler(str(tmp_path))[1, 16](r, x)
    np.testing.assert_array_equal(r, x * 3)


def test_from_buffer_hands_the_function_the_arrays_data(declared):
    x = np.arange(10, dtype=np.float32)
    result = np.zeros(1, dtype=np.float32)
    declared.total[1, 1](result, x)
    assert result[0] == 45.0


def test_from_buffer_refuses_an_array_that_is_not_contiguous(declared):
    from kiln._compiler import CompileError

    with pytest.raises(CompileError, match=r"from_buffer\(\) takes a contiguous array"):
        declared.total_of_every_other[1, 1](np.zeros(1, np.float32), np.zeros(8, np.float32))


GPU_ONLY = '''
from kiln import cuda

lane = cuda.declare_device("lane_of", "int32(int32)", link=["gpu_only.cu"])


@cuda.jit
def lanes(out):
    out[0] = 7
    out[1] = lane(0)
'''

GPU_ONLY_CU = '''
extern "C" __device__ int lane_of(int *result, int x) {
  *result = threadIdx.x % 32 + x;
  return 0;
}
'''


def test_code_only_a_gpu_runs_raises_when_its_call_runs(source_module, tmp_path):
    (tmp_path / "gpu_only.cu").write_text(GPU_ONLY_CU)
    module = source_module("gpu_only_kernels", GPU_ONLY)
    out = np.zeros(2, np.int32)
    with pytest.raises(NotImplementedError) as raised:
        module.lanes[1, 1](out)
    message = str(raised.value)
    assert "'lane' ('lane_of') cannot run on the CPU engine" in message, message
    assert "'gpu_only.cu' does not compile for the CPU engine" in message and "threadIdx" in message, message
    assert out[0] == 7, "the kernel runs until it reaches the call"


INCLUDING = '''
from kiln import cuda

twice = cuda.declare_device("twice", "float64(float64)", link=["including.cu"])


@cuda.jit
def doubled(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = twice(x[i])
'''

INCLUDING_CU = '''
#include <factor.cuh>

extern "C" __device__ int twice(double *result, double x) {
  *result = x * FACTOR;
  return 0;
}
'''


def write_including(folder, factor):
    headers = folder / "headers"
    headers.mkdir(exist_ok=True)
    (headers / "factor.cuh").write_text(f"#define FACTOR {factor}\n")
    (folder / "including.cu").write_text(INCLUDING_CU)
    (folder / "including_kernels.py").write_text(INCLUDING)
    return headers


def test_include_folders_come_from_the_config(source_module, tmp_path, monkeypatch):
    from kiln.cuda import config

    headers = write_including(tmp_path, 2)
    monkeypatch.setattr(config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", f"/nonexistent:{headers}")
    module = source_module("including_kernels", INCLUDING)
    x = np.arange(5, dtype=np.float64)
    r = np.zeros_like(x)
    module.doubled[1, 8](r, x)
    np.testing.assert_array_equal(r, 2 * x)


def test_without_its_include_folder_the_call_says_what_is_missing(source_module, tmp_path):
    write_including(tmp_path, 2)
    module = source_module("including_kernels", INCLUDING)
    with pytest.raises(NotImplementedError, match=r"'factor.cuh' file not found"):
        module.doubled[1, 8](np.zeros(2), np.zeros(2))


RUN_DOUBLED = '''
import numpy as np
import including_kernels
r = np.zeros(3)
including_kernels.doubled[1, 4](r, np.arange(3.0))
print(r.tolist())
'''


def test_kiln_build_takes_include_folders_and_compiles_an_edited_file_again(kiln, tmp_path, package_dir):
    """--link-include reaches nvcc (the GPU code) and clang (the CPU
    engine's); the cache keys host code by the .cu file it links."""
    headers = write_including(tmp_path, 2)
    # A Numba kernel module: the build makes the module itself.
    (tmp_path / "including_kernels.py").write_text(
        INCLUDING.replace("from kiln import", "from numba import").replace("@cuda.jit", '@cuda.jit("void(float64[::1], float64[::1])")'))
    cache = tmp_path / "cache"

    def build_and_run():
        out = tmp_path / "out"
        result = kiln("build", tmp_path / "including_kernels.py", "--module", "including_kernels", "-o", out,
                      "--arch", TEST_ARCH, "--python", sys.executable, "--cache-dir", cache,
                      "--link-include", headers)
        assert result.returncode == 0, result.stderr
        ran = subprocess.run([sys.executable, "-c", RUN_DOUBLED], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=f"{out}{os.pathsep}{package_dir}", KILN_TARGET="cpu"))
        assert ran.returncode == 0, ran.stderr
        return ran.stdout.strip()

    assert build_and_run() == "[0.0, 2.0, 4.0]"
    (tmp_path / "including.cu").write_text(INCLUDING_CU.replace("x * FACTOR", "x * FACTOR + 1"))
    assert build_and_run() == "[1.0, 3.0, 5.0]", "an edited .cu file must be compiled again"
    (headers / "factor.cuh").write_text("#define FACTOR 3\n")
    assert build_and_run() == "[1.0, 4.0, 7.0]", "a .cu file whose header changed must be compiled again"

    result = kiln("build", tmp_path / "including_kernels.py", "--module", "including_kernels",
                  "-o", tmp_path / "out2", "--arch", TEST_ARCH, "--python", sys.executable, "--no-cache")
    assert result.returncode != 0 and "factor.cuh" in result.stderr, \
        "without --link-include nvcc cannot find the header, and says which"


def test_the_depfile_lists_the_headers_a_cu_file_includes(kiln, tmp_path):
    headers = write_including(tmp_path, 2)
    (tmp_path / "including_kernels.py").write_text(
        INCLUDING.replace("from kiln import", "from numba import").replace("@cuda.jit", '@cuda.jit("void(float64[::1], float64[::1])")'))
    depfile = tmp_path / "including.d"
    result = kiln("build", tmp_path / "including_kernels.py", "--emit", "ptx", "-o", tmp_path / "out",
                  "--arch", TEST_ARCH, "--link-include", headers, "--depfile", depfile, "--no-cache")
    assert result.returncode == 0, result.stderr
    listed = depfile.read_text()
    assert str((headers / "factor.cuh").resolve()) in listed and str(tmp_path / "including.cu") in listed, \
        f"a build system must rerun kiln when the .cu file or a header it includes changes: {listed}"


AHEAD_OF_TIME = '''
import cffi
from numba import cuda

sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)", link="functions.cu")
add2 = cuda.declare_device("add2", "int32(int32, int32)", link=["c_abi.cu"], abi="c")
ffi = cffi.FFI()


@cuda.jit("void(float32[::1], float32[::1])")
def total(result, array):
    result[0] = sum_reduce(ffi.from_buffer(array), len(array)) + add2(1, 2)
'''

RUN_TOTAL = '''
import numpy as np
import totals
result = np.zeros(1, np.float32)
totals.total[1, 1](result, np.arange(10, dtype=np.float32))
print(result[0])
'''


def test_a_module_built_ahead_of_time_passes_array_data_with_from_buffer(kiln, tmp_path, package_dir):
    """`ffi = cffi.FFI()` read from the source: the GPU build links the
    files' PTX with the kernel's (nvJitLink), the CPU engine their host
    code; one function of Numba's ABI, one of the C ABI."""
    (tmp_path / "functions.cu").write_text(FUNCTIONS_CU)
    (tmp_path / "c_abi.cu").write_text(C_ABI_CU)
    (tmp_path / "totals.py").write_text(AHEAD_OF_TIME)
    out = tmp_path / "out"
    result = kiln("build", tmp_path / "totals.py", "--module", "totals", "-o", out, "--arch", TEST_ARCH,
                  "--python", sys.executable, "--no-cache")
    assert result.returncode == 0, result.stderr
    ran = subprocess.run([sys.executable, "-c", RUN_TOTAL], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=f"{out}{os.pathsep}{package_dir}", KILN_TARGET="cpu"))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "48.0"


C_ABI = '''
import numpy as np
from kiln import cuda

add2 = cuda.declare_device("add2", "int32(int32, int32)", link=["c_abi.cu"], abi="c")


@cuda.jit
def added(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = add2(x[i], i)


def in_memory():
    """Code held in memory, declared with a signature object; one file's
    function calls the other's."""
    from numba.cuda import types

    times2_cu = cuda.CUSource(\'\'\'
extern "C" __device__ int times2(int a) { return a * 2; }
\'\'\')
    times4_cu = cuda.CUSource(\'\'\'
extern "C" __device__ int times2(int a);
extern "C" __device__ int times4(int a) { return times2(times2(a)); }
\'\'\')
    times4 = cuda.declare_device("times4", types.int32(types.int32), link=(times2_cu, times4_cu), abi="c")

    @cuda.jit
    def quadrupled(r, x):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = times4(x[i])

    return quadrupled
'''

C_ABI_CU = '''
extern "C" __device__ int add2(int a, int b) { return a + b; }
'''


def test_the_c_abi_returns_the_value_itself(source_module, tmp_path):
    (tmp_path / "c_abi.cu").write_text(C_ABI_CU)
    module = source_module("c_abi_kernels", C_ABI)
    x = np.arange(10, dtype=np.int32)
    r = np.zeros_like(x)
    module.added[1, 16](r, x)
    np.testing.assert_array_equal(r, 2 * x)

    pytest.importorskip("numba.cuda.types")
    r = np.zeros_like(x)
    module.in_memory()[1, 16](r, x)
    np.testing.assert_array_equal(r, 4 * x)


def test_declarations_numba_refuses_are_refused_as_numba_does():
    from kiln import cuda

    with pytest.raises(NotImplementedError, match="Unsupported ABI: fortran"):
        cuda.declare_device("f", "int32(int32)", abi="fortran")
    with pytest.raises(TypeError, match="Return type must be provided"):
        cuda.declare_device("f", "(float32[:],)")


def test_an_abi_kiln_does_not_know_is_an_error_of_the_module(kiln, tmp_path):
    (tmp_path / "bad_abi.py").write_text(
        'from numba import cuda\nf = cuda.declare_device("f", "int32(int32)", abi="pascal")\n')
    result = kiln("check", tmp_path / "bad_abi.py")
    assert result.returncode == 1 and "abi" in result.stderr and "'numba' or 'c'" in result.stderr, result.stderr
