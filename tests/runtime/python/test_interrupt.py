"""Ctrl-C stops a kernel on the CPU engine: SIGINT during a launch that
would never end (an infinite loop, with or without barriers, or a legal
grid of 2**31 - 1 blocks) makes the launch raise KeyboardInterrupt, and the
next launch in the same process runs normally. Each case runs in a child
process that the test interrupts; the bound on how long the child may take
is generous, as this is a test that nothing hangs, not a timing test.
"""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

KERNELS = '''
from numba import cuda, int32, void


@cuda.jit(void(int32[::1]))
def spin_forever(out):
    i = 0
    while out[0] == 0:
        i += 1
        out[1] = i


@cuda.jit(void(int32[::1]))
def spin_with_barriers(out):
    while out[0] == 0:
        cuda.syncthreads()
        out[1] = cuda.threadIdx.x


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
    print("interrupted", flush=True)
out = np.zeros(4, np.int32)
m.fill[1, 4](out)
print("second launch", out.tolist(), flush=True)
'''

# Far beyond what any launch here needs to stop; only a hang reaches it.
HANG_BOUND_SECONDS = 20


@pytest.fixture(scope="module")
def kernels_folder(build_module, tmp_path_factory):
    source = tmp_path_factory.mktemp("interrupt") / "interrupt_kernels.py"
    source.write_text(KERNELS)
    return build_module(source)


@pytest.mark.parametrize("kernel, grid, block", [
    ("spin_forever", 1, 1),
    ("spin_forever", 64, 128),
    ("spin_with_barriers", 4, 64),
    ("fill", 2**31 - 1, 1024),
])
def test_sigint_stops_the_launch_and_the_engine_stays_usable(package_dir, kernels_folder, kernel,
                                                             grid, block):
    code = CHILD.format(folder=str(kernels_folder), kernel=kernel, grid=grid, block=block)
    env = dict(os.environ, KILN_TARGET="cpu", PYTHONPATH=str(package_dir))
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = child.stdout.readline()
        assert first.strip() == "launching", f"the child did not start: {first}{child.stderr.read()}"
        # Let the launch get going before interrupting it.
        try:
            child.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=HANG_BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail(f"{kernel}[{grid}, {block}] still ran {HANG_BOUND_SECONDS} s after SIGINT")
    assert child.returncode == 0, f"the child failed ({child.returncode}):\n{stdout}\n{stderr}"
    lines = stdout.splitlines()
    assert lines[0] == "interrupted", (
        f"{kernel}[{grid}, {block}] must end with KeyboardInterrupt, got: {stdout}\n{stderr}")
    assert lines[1] == "second launch [0, 1, 2, 3]", (
        f"a launch after the interrupted one must run normally, got: {stdout}\n{stderr}")
