"""`kiln check`: exit status, output formats, and where signatures come from."""

import json
import os
import re
import sys

KERNEL_WITHOUT_SIGNATURE = """\
from numba import cuda


@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + y[i]
"""


def examples(repo_root):
    return sorted((repo_root / "examples").glob("*.py"))


def test_version_names_kiln_llvm_and_cuda(kiln):
    result = kiln("--version")
    assert result.returncode == 0
    assert re.match(r"kiln \d+\.\d+\.\d+ \(LLVM 19\.\d+\.\d+, built with CUDA \d+\.\d+", result.stdout)


def test_help_lists_the_check_subcommand(kiln):
    result = kiln("--help")
    assert result.returncode == 0
    assert "check" in result.stdout
    assert "Usage" in result.stdout or "usage" in result.stdout


def test_every_example_checks_clean(kiln, repo_root):
    result = kiln("check", *examples(repo_root))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    for path in examples(repo_root):
        assert str(path) in result.stdout


def test_errors_exit_1_with_clang_style_diagnostics(kiln, tmp_path):
    source = tmp_path / "bad.py"
    source.write_text("from numba import cuda\n\n@cuda.jit('void(float32[:])')\n"
                      "def k(x):\n    x[0] = missing\n")
    result = kiln("check", source)
    assert result.returncode == 1
    assert f"{source}:5:12: error: name 'missing' is not defined" in result.stderr
    assert "    x[0] = missing\n           ^~~~~~~" in result.stderr
    assert "1 error generated." in result.stderr


def test_json_lists_functions_specializations_and_hashes(kiln, repo_root):
    result = kiln("check", "--json", repo_root / "examples" / "rounding.py")
    assert result.returncode == 0
    [module] = json.loads(result.stdout)
    assert module["ok"] is True
    kinds = {f["name"]: f["kind"] for f in module["functions"]}
    assert kinds == {"rint": "device function", "gpu_round": "kernel"}
    [spec] = [f for f in module["functions"] if f["name"] == "gpu_round"][0]["specializations"]
    assert spec["args"] == ["array(float64, 1d, C)", "array(float64, 1d, C)", "int64"]
    assert re.fullmatch(r"[0-9a-f]{64}", spec["semantic_hash"])
    assert "locals" not in spec  # only with -v


def test_json_carries_diagnostics_with_positions(kiln, tmp_path):
    source = tmp_path / "bad.py"
    source.write_text("from numba import cuda\n\n@cuda.jit('void(float32[:])')\n"
                      "def k(x):\n    x[0] = x + None\n")
    result = kiln("check", "--json", source)
    assert result.returncode == 1
    [module] = json.loads(result.stdout)
    assert module["ok"] is False
    [diagnostic] = module["diagnostics"]
    assert diagnostic["severity"] == "error"
    assert (diagnostic["line"], diagnostic["column"]) == (5, 12)
    assert diagnostic["notes"][0]["message"].startswith("in kernel 'k' compiled for")


def test_verbose_prints_every_local_variables_types(kiln, repo_root):
    result = kiln("check", "-v", repo_root / "examples" / "mandelbrot.py")
    assert result.returncode == 0
    assert "      z: complex128\n" in result.stdout
    assert "semantic hash" in result.stdout


def test_kernel_without_signature_says_how_to_add_one(kiln, tmp_path):
    source = tmp_path / "kernels.py"
    source.write_text(KERNEL_WITHOUT_SIGNATURE)
    result = kiln("check", source)
    assert result.returncode == 1
    assert "error: kernel 'add' has no signature" in result.stderr
    assert "[tool.kiln.signatures] in pyproject.toml" in result.stderr
    assert "--signature" in result.stderr


def test_signature_flag_supplies_a_missing_signature(kiln, tmp_path):
    source = tmp_path / "kernels.py"
    source.write_text(KERNEL_WITHOUT_SIGNATURE)
    result = kiln("check", "--signature", "add=void(float32[:], float32[:], float32[:])", source)
    assert result.returncode == 0, result.stderr
    assert "(array(float32, 1d, A), array(float32, 1d, A), array(float32, 1d, A)) -> none" \
        in result.stdout


def test_malformed_signature_flag_is_a_clear_error(kiln, tmp_path):
    source = tmp_path / "kernels.py"
    source.write_text(KERNEL_WITHOUT_SIGNATURE)
    result = kiln("check", "--signature", "void(float32[:])", source)
    assert result.returncode == 1
    assert "--signature expects NAME=SIGNATURE" in result.stderr


def test_pyproject_signatures_apply_to_the_modules_below_it(kiln, tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "kernels.py").write_text(KERNEL_WITHOUT_SIGNATURE)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\n\n[tool.kiln.signatures]\n'
        'add = ["void(float32[::1], float32[::1], float32[::1])",\n'
        '       "void(float64[::1], float64[::1], float64[::1])"]\n')
    result = kiln("check", package / "kernels.py")
    assert result.returncode == 0, result.stderr
    assert "array(float32, 1d, C)" in result.stdout
    assert "array(float64, 1d, C)" in result.stdout


def test_module_qualified_pyproject_keys_need_the_module_name(kiln, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNEL_WITHOUT_SIGNATURE)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.kiln.signatures]\n"pkg.kernels.add" = "void(int32[:], int32[:], int32[:])"\n')
    assert kiln("check", tmp_path / "kernels.py").returncode == 1
    result = kiln("check", "--module", "pkg.kernels", tmp_path / "kernels.py")
    assert result.returncode == 0, result.stderr
    assert "array(int32, 1d, A)" in result.stdout


def test_errors_in_pyproject_signatures_point_into_pyproject(kiln, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNEL_WITHOUT_SIGNATURE)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.kiln.signatures]\nadd = "void(float32[:], flaot32[:], float32[:])"\n')
    result = kiln("check", tmp_path / "kernels.py")
    assert result.returncode == 1
    assert f"{pyproject}:2:25: error: name 'flaot32' is not defined in a signature string" \
        in result.stderr


def test_a_pyproject_signature_that_is_not_a_string_is_an_error_at_its_value(kiln, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNEL_WITHOUT_SIGNATURE)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.kiln.signatures]\n'
                         'add = ["void(float32[:], float32[:], float32[:])", 7]\n')
    result = kiln("check", tmp_path / "kernels.py")
    assert result.returncode == 1
    assert (f"{pyproject}:2:52: error: [tool.kiln.signatures] entry 'add' must be a signature "
            "string or a list of them") in result.stderr, result.stderr


def test_invalid_pyproject_is_reported_not_fatal(kiln, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNEL_WITHOUT_SIGNATURE)
    (tmp_path / "pyproject.toml").write_text("[tool.kiln.signatures\nadd = 1\n")
    result = kiln("check", tmp_path / "kernels.py")
    assert result.returncode == 1
    assert "invalid pyproject.toml" in result.stderr


def test_unreadable_input_is_an_error(kiln, tmp_path):
    result = kiln("check", tmp_path)  # a directory
    assert result.returncode == 1
    assert "cannot read" in result.stderr


def test_arbitrary_bytes_give_diagnostics_not_a_crash(kiln, tmp_path):
    source = tmp_path / "noise.py"
    source.write_bytes(bytes(range(256)) * 8)
    result = kiln("check", source)
    assert result.returncode == 1
    assert "error:" in result.stderr


NUMBA_MODULE_WITH_HOST_CODE = '''
import numpy as np
from numba import cuda


@cuda.jit
def scale(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * x[i]


def run(x):
    out = np.zeros_like(x)
    scale[1, 32](out, x)
    return out
'''


def test_a_numba_module_with_host_code_is_told_to_import_kiln(kiln, tmp_path):
    source = tmp_path / "numba_style.py"
    source.write_text(NUMBA_MODULE_WITH_HOST_CODE)
    result = kiln("check", source)
    assert result.returncode == 1
    assert "function 'run' has no decorator" in result.stderr
    assert (f"{source}:3:6: note: with 'from numba import cuda', the module's build replaces it"
            in result.stderr), result.stderr
    assert "write 'from kiln import cuda' instead" in result.stderr

    source.write_text(NUMBA_MODULE_WITH_HOST_CODE.replace("from numba import", "from kiln import"))
    result = kiln("check", source)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "kernel scale" in result.stdout


MODULE_WITH_A_TABLE = """\
import numpy as np
from kiln import cuda

TABLE = np.linspace(0.0, 1.0, 8)


@cuda.jit("void(float64[::1])")
def read(out):
    out[0] = TABLE[3]
"""


def test_check_runs_the_module_with_its_python_to_read_a_table(kiln, tmp_path, build_dir):
    """A kernel reading a NumPy table the module computes checks clean when
    `--python` can run the module, and fails saying why when it cannot."""
    source = tmp_path / "tabled.py"
    source.write_text(MODULE_WITH_A_TABLE)
    environment = dict(os.environ, PYTHONPATH=str(build_dir / "python"))
    good = kiln("check", source, "--python", sys.executable, env=environment)
    assert good.returncode == 0, good.stderr
    assert "kernel read" in good.stdout

    bad = kiln("check", source, "--python", str(tmp_path / "no-such-python"), env=environment)
    assert bad.returncode != 0
    assert "cannot read the globals" in bad.stderr and "tabled.py computes at import" in bad.stderr
    assert "'TABLE' is a value computed at import" in bad.stderr


def test_a_pyproject_nested_too_deeply_is_an_error_naming_it(kiln, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNEL_WITHOUT_SIGNATURE)
    depth = 100_000
    (tmp_path / "pyproject.toml").write_text("[tool.kiln]\nx = " + "[" * depth + "]" * depth + "\n")
    result = kiln("check", tmp_path / "kernels.py")
    assert result.returncode == 1, f"kiln check ended with {result.returncode}: {result.stderr[:300]}"
    assert "pyproject.toml:2:" in result.stderr and "exceeded maximum nested value depth" in result.stderr
