"""Ctrl-C stops a kernel on the CPU engine: SIGINT during a launch that
would never end makes the launch raise KeyboardInterrupt within a second,
and the next launch in the same process runs normally. Every kind of loop
that can run forever is covered, on every way the engine runs a kernel: a
`while` on data (on one thread, a warp and a grid of many blocks, whose
blocks the engine runs in runs), with index checks on and off and in the
engine's reference mode; a loop with barriers (region loops), a loop with a
barrier in a branch in a kernel whose frame is too large for region loops
(coroutines), a loop in a kernel that waits at a warp collective (fibers), a loop
between grid barriers (a cooperative grid's blocks taking turns),
a loop in a recursive device function (which the optimizer compiles
without the thread it polls through), and a legal grid of 2**31 - 1
blocks. Each case runs in a child process that the test interrupts.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

KERNELS = '''
from numba import cuda, int32, int64, void


@cuda.jit(void(int32[::1]))
def spin_on_data(x):
    while x[0] >= 0:
        x[1] += 1


@cuda.jit(void(int32[::1]))
def spin_with_barriers(out):
    while out[0] == 0:
        cuda.syncthreads()
        out[1] = cuda.threadIdx.x


@cuda.jit(void(int32[::1]))
def spin_past_a_branch_barrier(out):
    frame = cuda.local.array(2048, int64)
    for k in range(2048):
        frame[k] = k + out[2]
    cuda.syncthreads()
    while out[0] == 0:
        if out[3] != 0:
            cuda.syncthreads()
        out[1] = frame[cuda.threadIdx.x]
    cuda.syncthreads()
    out[2] = frame[7]


@cuda.jit(void(int32[::1]))
def spin_after_a_shuffle(out):
    first = cuda.shfl_sync(0xFFFFFFFF, out[0], 0)
    while first == 0:
        out[1] += 1


@cuda.jit(void(int32[::1]))
def spin_between_grid_barriers(out):
    g = cuda.cg.this_grid()
    while out[0] == 0:
        g.sync()
        out[1] = cuda.grid(1)


@cuda.jit(device=True)
def count_down(n, x):
    if n > 0:
        return count_down(n - 1, x)
    total = 0
    while x[0] >= 0:
        total += 1
        if total > 1000000:
            total = 0
    return total


@cuda.jit(void(int32[::1]))
def spin_in_a_recursive_function(x):
    x[2] = count_down(3, x)


@cuda.jit(void(int32[::1]))
def fill(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i
'''

# A process started in the background of a non-interactive shell (as CI
# may start the tests) inherits SIGINT ignored, and Python then keeps it
# ignored; the child asks for Python's own handler, as an interactive
# session has it.
CHILD = '''
import signal
import sys
import time
import numpy as np
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {folder!r})
import interrupt_kernels as m

out = np.zeros(4, np.int32)
print("launching", flush=True)
try:
    m.{kernel}[{grid}, {block}](out)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
out = np.zeros(4, np.int32)
m.fill[1, 4](out)
print("second launch", out.tolist(), flush=True)
'''

# What KeyboardInterrupt may take after SIGINT: the engine polls every few
# milliseconds; a second is the promise.
PROMPT_SECONDS = 1.0
# Far beyond what any launch here needs to stop; only a hang reaches it.
HANG_BOUND_SECONDS = 20

# (kernel, grid, block, environment)
CASES = [
    *[("spin_on_data", grid, block, {"KILN_CPU_BOUNDSCHECK": checks})
      for grid, block in [(1, 1), (1, 32), (64, 256)] for checks in ("1", "0")],
    *[("spin_on_data", grid, block, {"KILN_CPU_REFERENCE": "1"}) for grid, block in [(1, 1), (64, 256)]],
    ("spin_with_barriers", 4, 64, {}),
    ("spin_past_a_branch_barrier", 2, 64, {}),
    ("spin_after_a_shuffle", 2, 32, {}),
    ("spin_between_grid_barriers", 4, 64, {}),
    ("spin_between_grid_barriers", 4, 64, {"KILN_CPU_REFERENCE": "1"}),
    *[("spin_in_a_recursive_function", 1, 1, {"KILN_CPU_BOUNDSCHECK": checks}) for checks in ("1", "0")],
    ("spin_in_a_recursive_function", 1, 1, {"KILN_CPU_REFERENCE": "1"}),
    ("fill", 2**31 - 1, 1024, {}),
]


@pytest.fixture(scope="module")
def kernels_folder(build_module, tmp_path_factory):
    source = tmp_path_factory.mktemp("interrupt") / "interrupt_kernels.py"
    source.write_text(KERNELS)
    # Both copies of each kernel's body, so that the cases that set
    # KILN_CPU_BOUNDSCHECK interrupt each.
    return build_module(source, None, "--switchable-index-checks")


@pytest.mark.parametrize("kernel, grid, block, environment", CASES,
                         ids=[f"{k}[{g},{b}]{''.join(f'-{n}={v}' for n, v in e.items())}" for k, g, b, e in CASES])
def test_sigint_stops_the_launch_within_a_second_and_the_engine_stays_usable(
        package_dir, kernels_folder, kernel, grid, block, environment):
    code = CHILD.format(folder=str(kernels_folder), kernel=kernel, grid=grid, block=block)
    env = dict(os.environ, KILN_TARGET="cpu", PYTHONPATH=str(package_dir), **environment)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    launch = f"{kernel}[{grid}, {block}] with {environment or 'the defaults'}"
    try:
        first = child.stdout.readline()
        assert first.strip() == "launching", f"the child did not start: {first}{child.stderr.read()}"
        # Let the launch get going before interrupting it.
        try:
            child.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=HANG_BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail(f"{launch} still ran {HANG_BOUND_SECONDS} s after SIGINT")
    assert child.returncode == 0, f"the child failed ({child.returncode}):\n{stdout}\n{stderr}"
    lines = stdout.splitlines()
    assert lines[0].startswith("interrupted "), (
        f"{launch} must end with KeyboardInterrupt, got: {stdout}\n{stderr}")
    # CLOCK_MONOTONIC is one clock for every process of the machine.
    took = float(lines[0].split()[1]) - sent
    assert took < PROMPT_SECONDS, f"{launch} raised KeyboardInterrupt {took:.2f} s after SIGINT"
    assert lines[1] == "second launch [0, 1, 2, 3]", (
        f"a launch after the interrupted one must run normally, got: {stdout}\n{stderr}")
