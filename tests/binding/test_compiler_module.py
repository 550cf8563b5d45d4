"""kiln._compiler builds kernel modules in process, as `kiln build --module`
does in a subprocess: the same files, the same diagnostics, without the GIL."""

import filecmp
import importlib.machinery
import importlib.util
import os
import pathlib
import sys
import threading

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO / "build")) / "python"))

from kiln import _compiler  # noqa: E402

VECTOR_ADD = REPO / "examples" / "vector_add.py"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_built_module_runs_on_the_cpu_engine(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_TARGET", "cpu")
    [path] = _compiler.build_module(str(VECTOR_ADD), str(tmp_path), module_name="in_process_add",
                                    arch="80")
    module = load(path, "in_process_add")
    a = np.arange(1000, dtype=np.float32)
    b = np.full(1000, 0.5, dtype=np.float32)
    out = np.zeros_like(a)
    module.add_kernel[8, 128](a, b, out)
    np.testing.assert_array_equal(out, a + b)


def test_files_are_those_kiln_build_writes(kiln, tmp_path):
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    [in_process] = _compiler.build_module(str(VECTOR_ADD), str(tmp_path / "binding"), arch="80;90",
                                          module_name="pkg.vector_add")
    result = kiln("build", VECTOR_ADD, "--module", "pkg.vector_add", "--arch", "80;90",
                  "-o", tmp_path / "cli", "--ext-suffix", suffix, "-q")
    assert result.returncode == 0, result.stderr
    from_cli = tmp_path / "cli" / f"vector_add{suffix}"
    assert pathlib.Path(in_process).name == from_cli.name
    assert filecmp.cmp(in_process, from_cli, shallow=False), \
        "the in-process build must write the module kiln build writes, byte for byte"


def test_diagnostics_are_those_kiln_build_prints(kiln, tmp_path):
    source = tmp_path / "broken.py"
    source.write_text("from numba import cuda\n\n\n@cuda.jit('void(int32[:])')\ndef k(a):\n"
                      "    a[0] = undefined_name\n")
    with pytest.raises(_compiler.CompileError) as error:
        _compiler.build_module(str(source), str(tmp_path / "out"))
    cli = kiln("build", source, "--module", "broken", "-o", tmp_path / "cli", "-q")
    assert cli.returncode != 0
    assert str(error.value) == cli.stderr.rstrip("\n")
    assert f"{source}:6:12: error: name 'undefined_name' is not defined" in str(error.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir()), \
        "a failed build writes nothing"


@pytest.mark.parametrize("arguments, error, message", [
    (dict(file="missing.py"), _compiler.CompileError, "cannot read 'missing.py'"),
    (dict(arch="sm_bogus"), _compiler.CompileError, "'sm_bogus': not an architecture"),
    (dict(module_name="pkg.1st"), ValueError, "'pkg.1st' is not a module name Kiln can build"),
    (dict(signatures=[3]), TypeError, "signatures must hold str, not int"),
    (dict(signatures="add_kernel=void()"), TypeError, "signatures must be a list of str, not a str"),
    (dict(host_values="{"), ValueError, "host values are not valid JSON"),
    (dict(host_values="[]"), ValueError, "host values must be a JSON object of module files"),
    (dict(host_values='{"/m.py": {"T": {"kind": "array", "dtype": "float64", "data": "00"}}}'),
     ValueError, "host value 'T' of /m.py: an array needs a \"shape\""),
    (dict(host_values='{"/m.py": {"T": {"kind": "dict"}}}'), ValueError, "unknown kind \"dict\""),
    (dict(host_values='{"@methods": []}'), ValueError,
     "host value '' of @methods: expected an object of \"receiver.method\" names"),
    (dict(host_values='{"@methods": {"norm": {"kind": "overload", "name": "norm", "key": "k", '
                      '"resolved": []}}}'),
     ValueError, "host value 'norm' of @methods: an overloaded method is an overload named "
                 "\"receiver.method\""),
    (dict(host_values='{"@methods": {"Array.norm": {"kind": "int", "data": "0000000000000000"}}}'), ValueError,
     "an overloaded method is an overload named"),
    (dict(host_values='{"/m.py": {"T": {"kind": "set"}}}'), ValueError, "a set needs \"items\""),
    (dict(host_values='{"/m.py": {"T": {"kind": "namespace", "name": "m"}}}'), ValueError,
     "a namespace needs a \"name\" and \"members\""),
    (dict(host_values='{"/m.py": {"T": {"kind": "namespace", "name": "m", "members": [["x"]]}}}'),
     ValueError, "a namespace's members are [name, value] pairs"),
    (dict(host_values='{"/m.py": {"T": {"kind": "float", "data": "xyz"}}}'), ValueError,
     "\"data\" must be hexadecimal digits"),
    (dict(closures=[("m.py", "k", "line", [], "f")]), TypeError, "closures hold (module path, name, line"),
    (dict(closures=[("m.py", "k", 3, "x", "f")]), TypeError, "a closure's free variables must be a list of str"),
])
def test_bad_arguments_raise_clear_errors(tmp_path, arguments, error, message):
    call = dict(file=str(VECTOR_ADD), output_dir=str(tmp_path))
    call.update(arguments)
    with pytest.raises(error) as raised:
        _compiler.build_module(**call)
    assert message in str(raised.value)


def test_signatures_specialize_kernels_declared_without_one(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_TARGET", "cpu")
    source = tmp_path / "lazy.py"
    source.write_text("from numba import cuda\n\n\n@cuda.jit\ndef twice(out, x):\n"
                      "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = 2 * x[i]\n")
    [path] = _compiler.build_module(
        str(source), str(tmp_path / "out"), arch="80",
        signatures=["twice=void(float64[::1], float64[::1])", "twice=void(int32[::1], int32[::1])"])
    module = load(path, "lazy")
    for dtype in (np.float64, np.int32):
        x = np.arange(64, dtype=dtype)
        out = np.zeros_like(x)
        module.twice[1, 64](out, x)
        np.testing.assert_array_equal(out, 2 * x)


def test_builds_run_in_parallel_threads(tmp_path):
    """The build releases the GIL: threads build at once, and each gets
    its own module."""
    results, errors = {}, []

    def build(index):
        try:
            results[index] = _compiler.build_module(str(VECTOR_ADD), str(tmp_path / str(index)),
                                                    module_name=f"parallel_{index}", arch="80",
                                                    no_cache=True)
        except Exception as error:  # reported below, with the thread's index
            errors.append((index, error))

    threads = [threading.Thread(target=build, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    assert sorted(results) == [0, 1, 2, 3]
    sizes = {pathlib.Path(paths[0]).stat().st_size for paths in results.values()}
    assert len(sizes) == 1, "the same module built four times must have one size"
