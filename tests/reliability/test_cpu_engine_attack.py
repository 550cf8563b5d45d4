"""Bad indices against the CPU engine, each launch in a child process of
its own: 48 out-of-bounds offsets over four kernels (1-D read, 1-D write,
2-D read-modify-write, shared and local arrays). Unchecked, such launches
kill the process (SIGSEGV, glibc's abort on a corrupted heap) or read and
write memory silently; Numba's simulator raises IndexError for every one.
All 48 must raise IndexError, and the child must then exit normally.

Run as a script to print the figures:

    PYTHONPATH=build/python python tests/reliability/test_cpu_engine_attack.py
"""

import collections
import concurrent.futures
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "kernels"))
import kiln_cpu  # noqa: E402

KERNELS = '''
from numba import cuda, int32, int64, void


@cuda.jit(void(int32[::1], int64, int32[::1]))
def read_1d(a, i, out):
    out[0] = a[i]


@cuda.jit(void(int32[::1], int64))
def write_1d(a, i):
    a[i] = 7


@cuda.jit(void(int32[:, ::1], int64, int64))
def update_2d(a, i, j):
    a[i, j] += 1


@cuda.jit(void(int64, int64, int32[::1]))
def shared_or_local(which, i, out):
    shared = cuda.shared.array(64, int32)
    local = cuda.local.array(64, int32)
    if which == 0:
        shared[i] = 3
        out[0] = shared[i]
    else:
        local[i] = 4
        out[0] = local[i]
'''

LARGE = [2**20, 2**31, 2**40]
# 12 bad offsets per kernel: just past either end, far past, and huge.
ATTACKS = (
    [("read_1d", (i,)) for i in [100, 101, 127, 1000, 4096, 65536, *LARGE, -101, -4096, -2**40]]
    + [("write_1d", (i,)) for i in [100, 101, 127, 1000, 4096, 65536, *LARGE, -101, -4096, -2**40]]
    + [("update_2d", ij) for ij in [(10, 0), (0, 10), (10, 10), (-11, 0), (0, -11), (100, 0),
                                    (0, 100), (1000, 1000), (2**31, 0), (0, 2**31),
                                    (-2**40, 0), (5, 2**40)]]
    + [("shared_or_local", (which, i)) for which in (0, 1)
       for i in [64, 1000, 2**20, -65, 2**31, -2**40]]
)

CHILD = '''
import importlib.util
import numpy as np
spec = importlib.util.spec_from_file_location({name!r}, {path!r})
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
a = np.zeros(100, np.int32)
grid = np.zeros((10, 10), np.int32)
out = np.zeros(1, np.int32)
kernel, args = {kernel!r}, {args!r}
try:
    if kernel == "read_1d":
        m.read_1d[1, 1](a, *args, out)
    elif kernel == "write_1d":
        m.write_1d[1, 1](a, *args)
    elif kernel == "update_2d":
        m.update_2d[1, 1](grid, *args)
    else:
        m.shared_or_local[1, 1](*args, out)
    print("no error")
except IndexError:
    print("IndexError")
except Exception as error:
    print(type(error).__name__)
'''


def attack(module, kernel, args):
    """What one launch did to its child: 'IndexError', 'SIGSEGV', 'abort', ..."""
    code = CHILD.format(name=module.__name__, path=module.__file__, kernel=kernel, args=args)
    env = dict(os.environ, KILN_TARGET="cpu", PYTHONPATH=os.pathsep.join(sys.path))
    for name in ("KILN_CPU_BOUNDSCHECK", "NUMBA_BOUNDSCHECK"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                            timeout=120)
    if result.returncode < 0:
        return signal.Signals(-result.returncode).name
    if "double free" in result.stderr or "corrupted" in result.stderr:
        return "abort"
    if result.returncode != 0:
        return f"exit {result.returncode}"
    return result.stdout.strip() or "no output"


def run_attacks(module):
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda case: attack(module, *case), ATTACKS))
    return list(zip(ATTACKS, outcomes))


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return kiln_cpu.compile_source(KERNELS, tmp_path_factory.mktemp("attack"), name="attack")


def test_all_48_bad_offsets_raise_index_error(module):
    assert len(ATTACKS) == 48
    results = run_attacks(module)
    failures = [f"{kernel}{args}: {outcome}" for (kernel, args), outcome in results
                if outcome != "IndexError"]
    assert not failures, (f"{len(failures)} of 48 bad offsets did not raise IndexError:\n"
                          + "\n".join(failures))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        built = kiln_cpu.compile_source(KERNELS, folder, name="attack")
        results = run_attacks(built)
    counts = collections.Counter(outcome for _, outcome in results)
    for (kernel, args), outcome in results:
        print(f"{kernel}{args}: {outcome}")
    print(", ".join(f"{count} {outcome}" for outcome, count in counts.most_common()),
          f"of {len(results)}")
    sys.exit(0 if counts["IndexError"] == len(results) else 1)
