"""Structured control flow, compiled by Kiln and judged by Numba.

Every kernel in data/control_flow_kernels.py (loops nested to depth three
with break and continue at each level, loop else clauses, short-circuit
and conditional expressions in loop conditions, while True, return from
inside loops) runs on Kiln's CPU engine and on Numba's CUDA simulator, and
the results must be identical. The same kernels compiled for sm_80 must
keep their stores to global memory: a lost store is how a miscompiled loop
exit showed on the GPU.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import kiln_cpu

KERNELS = pathlib.Path(__file__).parent / "data" / "control_flow_kernels.py"
THREADS = 6

# name -> the arguments after `out`.
CASES = {
    "break_outer_after_inner_loop": lambda: (7,),
    "count_in_inner_loop_break_outer": lambda: (5,),
    "while_in_while_break": lambda: (4,),
    "while_true_nested": lambda: (9,),
    "three_loops_break_each_level": lambda: (4,),
    "inner_loop_in_untaken_branch": lambda: (5,),
    "insertion_sort_local_array": lambda: (np.array([5, -3, 9, 0, 2, 2, -8, 7, 1], np.int64),),
    "loop_else_clauses": lambda: (5,),
    "continue_at_every_level": lambda: (5,),
    "short_circuit_loop_conditions": lambda: (np.array([3, 1, 0, 4, 2], np.int64),),
    "return_from_nested_loops": lambda: (4,),
}

SIMULATOR = """
import importlib.util, json, os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
import numpy as np
spec = importlib.util.spec_from_file_location("control_flow_kernels", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
cases = json.loads(sys.argv[2])
results = {}
for name, args in cases.items():
    out = np.zeros(int(sys.argv[3]) * 8, np.int64)
    args = [np.array(a, np.int64) if isinstance(a, list) else a for a in args]
    getattr(module, name)[1, int(sys.argv[3])](out, *args)
    results[name] = out.tolist()
print(json.dumps(results))
"""


def _arguments(name):
    return CASES[name]()


@pytest.fixture(scope="module")
def numba_results():
    cases = {
        name: [a.tolist() if isinstance(a, np.ndarray) else a for a in _arguments(name)]
        for name in CASES
    }
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    done = subprocess.run(
        [sys.executable, "-c", SIMULATOR, str(KERNELS), json.dumps(cases), str(THREADS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, f"Numba's simulator failed:\n{done.stderr}"
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def kiln_module():
    return kiln_cpu.compile_module(KERNELS)


def test_every_kernel_has_a_case():
    source = KERNELS.read_text()
    kernels = {line.split("(")[0][4:] for line in source.splitlines() if line.startswith("def ")}
    kernels.discard("first_pair_summing_to")  # a device function
    assert kernels == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cpu_engine_matches_numba(name, kiln_module, numba_results):
    out = np.zeros(THREADS * 8, np.int64)
    getattr(kiln_module, name)[1, THREADS](out, *_arguments(name))
    expected = numba_results[name]
    assert out.tolist() == expected, f"{name}: Kiln computed {out.tolist()}, Numba {expected}"


def test_sm80_ptx_keeps_every_kernels_stores(kiln, tmp_path):
    done = kiln("build", KERNELS, "--emit", "ptx", "--arch", "80", "-o", tmp_path)
    assert done.returncode == 0, done.stderr
    for name in CASES:
        ptx = (tmp_path / f"{name}.0.sm_80.ptx").read_text()
        assert "st.global" in ptx, f"{name}: the sm_80 PTX stores nothing to global memory"
