"""The runtime as users get it: no compiler, no Numba, no CUDA toolkit, small;
and every bad call of a kernel leaves the caller's arrays as they were."""

import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from kiln import _runtime

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"


def needed_libraries(path):
    output = subprocess.run(["llvm-readelf-19", "--dynamic-table", str(path)], capture_output=True, text=True,
                            check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in output.splitlines() if "(NEEDED)" in line]


def test_extension_needs_neither_llvm_nor_cuda_nor_python_library():
    needed = needed_libraries(_runtime.__file__)
    assert needed, "llvm-readelf found no DT_NEEDED entries: the check would prove nothing"
    unwanted = [lib for lib in needed if any(name in lib for name in ("LLVM", "cuda", "nvrtc", "python"))]
    assert not unwanted, f"kiln._runtime links {unwanted}; it must load libcuda with dlopen and need no compiler"


def test_runtime_is_under_one_megabyte_stripped(tmp_path):
    stripped = tmp_path / "runtime.so"
    subprocess.run(["strip", "-o", str(stripped), _runtime.__file__], check=True)
    package = pathlib.Path(_runtime.__file__).parent
    python_bytes = sum(path.stat().st_size for path in package.rglob("*.py"))
    total = stripped.stat().st_size + python_bytes
    assert total < 1 << 20, f"the runtime takes {total} bytes stripped; it should stay under 1 MB"


def test_built_module_runs_where_numba_cannot_be_imported(build_module, package_dir, tmp_path):
    folder = build_module(EXAMPLES / "vector_add.py", "vector_add")
    program = f"""
import sys
for name in ("numba", "llvmlite"):
    sys.modules[name] = None   # importing them now fails
sys.path[:0] = [{str(package_dir)!r}, {str(folder)!r}]
import numpy as np
import kiln.cuda as cuda
from vector_add import add_kernel
x = cuda.to_device(np.arange(64, dtype=np.float32))
out = cuda.device_array_like(x)
add_kernel[2, 32](x, x, out)
assert (out.copy_to_host() == 2 * np.arange(64)).all()
print("ok", sorted(m for m in sys.modules if m.startswith(("numba", "llvmlite")) and sys.modules[m]))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path,
                          env={"KILN_TARGET": "cpu", "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0, f"the built module needs something it should not:\n{done.stderr}"
    assert done.stdout.strip() == "ok []"


@pytest.fixture(scope="module")
def histogram(example):
    return example("histogram").cuda_histogram


def _bad_calls(kernel, x, hist):
    """(what, call) pairs that must each fail before touching any array."""
    return [
        ("too few arguments", lambda: kernel[1, 32](x, np.float32(-4), np.float32(4))),
        ("too many arguments", lambda: kernel[1, 32](x, np.float32(-4), np.float32(4), hist, hist)),
        ("wrong dtype", lambda: kernel[1, 32](x.astype(np.float64), np.float32(-4), np.float32(4), hist)),
        ("wrong ndim", lambda: kernel[1, 32](x.reshape(2, -1), np.float32(-4), np.float32(4), hist)),
        ("non-contiguous for [::1]", lambda: kernel[1, 32](x[::2], np.float32(-4), np.float32(4), hist)),
        ("None", lambda: kernel[1, 32](None, np.float32(-4), np.float32(4), hist)),
        ("a list", lambda: kernel[1, 32](list(x), np.float32(-4), np.float32(4), hist)),
        ("read-only output", lambda: kernel[1, 32](x, np.float32(-4), np.float32(4), _readonly(hist))),
        ("zero grid", lambda: kernel[0, 32](x, np.float32(-4), np.float32(4), hist)),
        ("zero block", lambda: kernel[1, 0](x, np.float32(-4), np.float32(4), hist)),
        ("block of 2048 threads", lambda: kernel[1, 2048](x, np.float32(-4), np.float32(4), hist)),
        ("block of 32x32x2 threads", lambda: kernel[1, (32, 32, 2)](x, np.float32(-4), np.float32(4), hist)),
        ("1 MiB of dynamic shared memory", lambda: kernel[1, 32, 0, 1 << 20](x, np.float32(-4), np.float32(4), hist)),
        ("no launch configuration", lambda: kernel(x, np.float32(-4), np.float32(4), hist)),
    ]


def _readonly(array):
    view = array.view()
    view.flags.writeable = False
    return view


def test_every_bad_call_is_a_clear_error_that_touches_nothing(histogram):
    x = np.linspace(-3, 3, 256, dtype=np.float32)
    hist = np.full(16, 7, dtype=np.int32)
    for what, call in _bad_calls(histogram, x, hist):
        x_before, hist_before = x.copy(), hist.copy()
        with pytest.raises((TypeError, ValueError)) as raised:
            call()
        message = str(raised.value)
        assert "cuda_histogram" in message or "configuration" in message or "blockdim" in message or \
            "griddim" in message or "shared" in message, f"{what}: the error does not say what failed: {message}"
        assert np.array_equal(x, x_before) and np.array_equal(hist, hist_before), f"{what} changed the arrays"


def test_module_without_a_specialization_for_the_types(example):
    vector_add = example("vector_add")
    with pytest.raises(TypeError, match=r"compiled: \(array\(int32, 1d, C\), int32\)"):
        vector_add.increment_kernel[1, 32](np.zeros(4, dtype=np.uint8), 1)


def test_a_kernel_exception_leaves_other_threads_results(example):
    reciprocal = example("reciprocal").reciprocal
    x = np.array([1.0, 2.0, 0.0, 4.0])
    with pytest.raises(ZeroDivisionError, match=r"tid=\[0, 0, 2\] ctaid=\[0, 0, 0\]"):
        reciprocal[1, 4](x)
    assert x[0] == 1.0 and x[1] == 0.5 and x[3] == 0.25, "threads that did not raise finish their work"


def _run_python(program, env, cwd):
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", **env}, timeout=120)


def test_built_module_shadows_its_source(build_module, package_dir, tmp_path):
    folder = build_module(EXAMPLES / "vector_add.py", "vector_add")
    shutil.copy(EXAMPLES / "vector_add.py", tmp_path / "vector_add.py")
    for built in folder.iterdir():
        shutil.copy(built, tmp_path / built.name)
    program = f"""
import sys
sys.path.insert(0, {str(package_dir)!r})
import vector_add
print(vector_add.__file__)
print("numba" in sys.modules)
"""
    done = _run_python(program, {"KILN_TARGET": "cpu"}, tmp_path)
    assert done.returncode == 0, done.stderr
    path, numba_imported = done.stdout.split()
    assert path.endswith(".so") and pathlib.Path(path).parent == tmp_path, f"imported {path}, not the built module"
    assert numba_imported == "False", "importing the built module ran the kernel source (which imports numba)"


LAUNCH_TWICE = """
import sys, warnings
sys.path[:0] = [{package!r}, {folder!r}]
warnings.simplefilter("always")
import numpy as np
from vector_add import increment_kernel
import kiln
data = np.zeros(64, dtype=np.int32)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    increment_kernel[2, 32](data, 1)
    increment_kernel[2, 32](data, 1)
print(kiln.target(), int(data.sum()))
for warning in caught:
    print(warning.category.__name__, warning.message)
"""


@pytest.mark.parametrize(
    "env, expected_target, warnings_expected",
    [
        ({"KILN_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}, "cpu", 1),
        ({"KILN_TARGET": "auto", "KILN_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}, "cpu", 1),
        ({"KILN_TARGET": "cpu"}, "cpu", 0),
    ],
    ids=["default", "auto", "cpu"],
)
def test_target_selection_without_a_gpu(build_module, package_dir, tmp_path, env, expected_target,
                                        warnings_expected):
    folder = build_module(EXAMPLES / "vector_add.py", "vector_add")
    done = _run_python(LAUNCH_TWICE.format(package=str(package_dir), folder=str(folder)), env, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{expected_target} 128", f"two launches of +1 over 64 elements: {lines[0]}"
    warnings = lines[1:]
    assert len(warnings) == warnings_expected, f"expected {warnings_expected} warning(s), got {warnings}"
    for warning in warnings:
        assert warning.startswith("RuntimeWarning") and "CPU engine" in warning and "/nonexistent" in warning


def test_cuda_target_without_a_driver_is_a_clear_error(build_module, package_dir, tmp_path):
    folder = build_module(EXAMPLES / "vector_add.py", "vector_add")
    program = LAUNCH_TWICE.format(package=str(package_dir), folder=str(folder))
    done = _run_python(program, {"KILN_TARGET": "cuda", "KILN_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}, tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError") and "/nonexistent/libcuda.so.1" in last, last
