"""Programs the differential tester found Kiln wrong on, reduced: each
regressions/NAME.py kernel, built with Kiln and run on the CPU engine,
must compute what regressions/NAME_reference.py (the same program as
`@numba.njit` functions, run thread by thread) computes."""

import ast
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from oracles import KILN
from programs import SENTINEL, THREADS, inputs, run_threads, scratch_array_length

REGRESSIONS = pathlib.Path(__file__).parent / "regressions"
CASES = sorted(p.stem for p in REGRESSIONS.glob("*.py") if not p.stem.endswith("_reference"))
SLOTS = 8  # per thread, in out_i and out_f: more than any regression uses

RUN = r"""
import importlib, json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
module = importlib.import_module(sys.argv[2])
arrays = [np.array(a, dtype=d) for a, d in json.loads(open(sys.argv[3]).read())]
kernel = next(getattr(module, n) for n in dir(module) if n.startswith("k") and n != "kiln")
grid, block = (tuple(d) if isinstance(d, list) else d for d in json.loads(sys.argv[4]))
kernel[grid, block](*arrays)
print(json.dumps([a.view(np.int64).tolist() for a in arrays[-4:]]))
"""


def _blocks(regression):
    """The grid's blocks: `BLOCKS = n` in a regression found on a grid of
    many blocks, else one."""
    found = re.search(r"^BLOCKS = (\d+)$", regression.read_text(), re.M)
    return int(found.group(1)) if found else 1


def _launch(regression, blocks):
    """`kernel[grid, block]`'s configuration: `LAUNCH = (grid, block)` in a
    regression found on another launch than `blocks` blocks of THREADS
    threads (blocks of a whole warp, or of two or three dimensions)."""
    found = re.search(r"^LAUNCH = (.+)$", regression.read_text(), re.M)
    return ast.literal_eval(found.group(1)) if found else (blocks, THREADS)


def regression_arrays(seed, blocks, threads):
    """The input arrays of `seed` and the four outputs, filled with the
    sentinel and sized for `blocks` blocks of `threads`."""
    arrays = list(inputs(seed).values())
    scratch = scratch_array_length(blocks, threads)
    for size, dtype in [(threads * blocks * SLOTS, np.int64), (threads * blocks * SLOTS, np.float64),
                        (scratch, np.int64), (scratch, np.float64)]:
        arrays.append(np.full(size, SENTINEL, np.int64).view(dtype))
    return arrays


def reference_outputs(reference, arrays, blocks, threads):
    """The four outputs, as int64 bits, after the njit kernel of the file
    `reference` ran on `arrays` for every thread of the grid."""
    spec = importlib.util.spec_from_file_location(reference.stem, reference)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = next(getattr(module, n) for n in dir(module) if n.startswith("k"))
    run_threads(kernel, threads, arrays, blocks)
    return [a.view(np.int64).tolist() for a in arrays[-4:]]


def check_regression(folder, name, work):
    """Builds `folder`/NAME.py with Kiln in `work`, runs it on the CPU
    engine on the launch it records, and compares every output with what
    `folder`/NAME_reference.py computes."""
    regression = pathlib.Path(folder) / f"{name}.py"
    source = pathlib.Path(work) / f"{name}.py"
    source.write_text(regression.read_text())
    built = subprocess.run([KILN, "build", source, "--module", name, "-o", work, "--arch", "80", "-q"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    blocks = _blocks(regression)
    launch = _launch(regression, blocks)
    threads = int(np.prod(launch[1]))
    arrays = regression_arrays(0, blocks, threads)
    # In a file: a grid of many blocks has more than a command line holds.
    payload = pathlib.Path(work) / "arrays.json"
    payload.write_text(json.dumps([[a.tolist(), a.dtype.name] for a in arrays]))
    env = dict(os.environ, KILN_TARGET="cpu")
    ran = subprocess.run([sys.executable, "-c", RUN, str(work), name, str(payload),
                          json.dumps(launch)], capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    got = json.loads(ran.stdout)
    expected = reference_outputs(pathlib.Path(folder) / f"{name}_reference.py", arrays, blocks, threads)
    for output, (kiln_values, numba_values) in zip(("out_i", "out_f", "s_i", "s_f"), zip(got, expected)):
        differing = [i for i, (a, b) in enumerate(zip(kiln_values, numba_values)) if a != b]
        assert not differing, (f"{name}: {output}[{differing[0]}] is {kiln_values[differing[0]]} on Kiln, "
                               f"{numba_values[differing[0]]} in Numba (as int64 bits)")


@pytest.mark.parametrize("name", CASES)
def test_kiln_computes_what_numba_computes(name, tmp_path):
    check_regression(REGRESSIONS, name, tmp_path)
