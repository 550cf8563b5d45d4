"""Signatures recorded from runs (KILN_RECORD_SIGNATURES, pytest
--kiln-record): merged, sorted, deduplicated, the same whatever the order,
and complete when several processes record at once."""

import os
import subprocess
import sys
import textwrap

import pytest

from kiln import signature_file

KERNELS = '''
from kiln import cuda


@cuda.jit
def scale(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * x[i]
'''


def run_python(code, tmp_path, package_dir, **environment):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(package_dir)]), **environment)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, env=env, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_calls_record_each_new_signature_once(tmp_path, package_dir):
    (tmp_path / "recorded_kernels.py").write_text(KERNELS)
    record = tmp_path / "kiln-signatures.toml"
    run_python('''
        import numpy as np
        import recorded_kernels as k
        for dtype in (np.float64, np.float32, np.float64):
            x = np.ones(4, dtype)
            k.scale[1, 4](np.zeros_like(x), x)
    ''', tmp_path, package_dir, KILN_RECORD_SIGNATURES=str(record))
    assert record.read_text() == (
        signature_file.HEADER
        + "[signatures]\n"
        + '"recorded_kernels.scale" = [\n'
        + '    "void(float32[::1], float32[::1])",\n'
        + '    "void(float64[::1], float64[::1])",\n'
        + "]\n")


def test_concurrent_processes_lose_nothing_and_order_does_not_matter(tmp_path, package_dir):
    record = tmp_path / "kiln-signatures.toml"
    writers = []
    for worker in range(4):
        code = textwrap.dedent(f'''
            from kiln import signature_file
            for i in range(25):
                signature_file.add({str(record)!r}, "pkg.k{{}}".format(i % 5),
                                   "void(int{{}}[::1])".format(({worker} * 25 + i) % 40))
        ''')
        env = dict(os.environ, PYTHONPATH=str(package_dir))
        writers.append(subprocess.Popen([sys.executable, "-c", code], env=env))
    assert all(writer.wait(timeout=300) == 0 for writer in writers)
    table = signature_file.read(record)
    expected = {}
    for n in range(100):
        expected.setdefault(f"pkg.k{n % 25 % 5}", set()).add(f"void(int{n % 40}[::1])")
    assert {k: set(v) for k, v in table.items()} == expected
    assert all(v == sorted(v) for v in table.values()), "each kernel's signatures are sorted"
    # The same entries added in another order give the same bytes.
    again = tmp_path / "again.toml"
    for kernel in sorted(expected, reverse=True):
        for signature in sorted(expected[kernel], reverse=True):
            signature_file.add(str(again), kernel, signature)
    assert again.read_text() == record.read_text()


def test_pytest_plugin_records_a_test_run(tmp_path, package_dir):
    (tmp_path / "recorded_by_pytest.py").write_text(KERNELS)
    (tmp_path / "test_uses_kernels.py").write_text(textwrap.dedent('''
        import numpy as np
        import recorded_by_pytest as k

        def test_scale():
            x = np.arange(8, dtype=np.int32)
            out = np.zeros_like(x)
            k.scale[1, 8](out, x)
            assert (out == 2 * x).all()
    '''))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(package_dir)]))
    env.pop(signature_file.ENVIRONMENT, None)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "kiln.pytest_plugin",
                             "--kiln-record", "-p", "no:cacheprovider", "test_uses_kernels.py"],
                            capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    table = signature_file.read(tmp_path / "kiln-signatures.toml")
    assert table == {"recorded_by_pytest.scale": ["void(int32[::1], int32[::1])"]}


def test_a_damaged_file_is_reported_and_left_alone(tmp_path):
    record = tmp_path / "kiln-signatures.toml"
    record.write_text("[signatures]\n\"pkg.k\" = [\"void(int32[::1])\",\n")
    with pytest.raises(signature_file.SignatureFileError, match="kiln-signatures.toml"):
        signature_file.add(str(record), "pkg.k", "void(int64[::1])")
    assert record.read_text() == "[signatures]\n\"pkg.k\" = [\"void(int32[::1])\",\n"


def test_the_fallback_reader_reads_what_is_written():
    table = {"pkg.a": ["void(float32[:, ::1])", 'void(Tuple((int64, float64)))'], "b\"q": ["void()"]}
    text = signature_file._render(table)
    assert signature_file._parse_written_subset(text, "f") == {k: sorted(v) for k, v in table.items()}
    assert signature_file._parse(text, "f") == {k: sorted(v) for k, v in table.items()}


def test_kiln_build_compiles_what_was_recorded(tmp_path, package_dir, kiln):
    (tmp_path / "recorded_then_built.py").write_text(KERNELS)
    record = tmp_path / "kiln-signatures.toml"
    run_python('''
        import numpy as np
        import recorded_then_built as k
        x = np.ones(4, np.int64)
        k.scale[1, 4](np.zeros_like(x), x)
    ''', tmp_path, package_dir, KILN_RECORD_SIGNATURES=str(record))
    built = kiln("build", tmp_path / "recorded_then_built.py", "--arch", "80-virtual",
                 "--python", sys.executable, "-q")
    assert built.returncode == 0, built.stderr
    assert list(tmp_path.glob("_recorded_then_built.kiln.*")), "kiln build wrote no companion"
    stdout = run_python('''
        import sys
        sys.modules["kiln._compiler"] = None   # the precompiled specialization alone
        import numpy as np
        import recorded_then_built as k
        assert k.__file__.endswith(".py"), k.__file__
        x = np.arange(4, dtype=np.int64)
        out = np.zeros_like(x)
        k.scale[1, 4](out, x)
        print(k.scale.signatures, out.tolist())
    ''', tmp_path, package_dir)
    assert stdout.strip() == "['(array(int64, 1d, C), array(int64, 1d, C))'] [0, 2, 4, 6]"
