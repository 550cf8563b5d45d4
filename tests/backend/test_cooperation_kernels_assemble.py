"""The kernel modules of the CPU engine's cooperation tests also compile for
a GPU: lowered for NVPTX and assembled by ptxas (sm_80), so that every
barrier, atomic, warp intrinsic, print and raise they use works on both
targets, not only on the host.
"""

import pytest

import test_atomics
import test_block_cooperation
import test_kernel_exceptions
import test_kernel_print
import test_launch_errors
import test_misc_intrinsics
import test_warp_intrinsics

MODULES = {
    "atomics": test_atomics.SOURCE,
    "block_cooperation": test_block_cooperation.SOURCE,
    "kernel_exceptions": test_kernel_exceptions.SOURCE,
    "kernel_print": test_kernel_print.SOURCE,
    "launch_errors": test_launch_errors.SOURCE,
    "deadlocks": test_launch_errors.DEADLOCKS,
    "misc_intrinsics": test_misc_intrinsics.SOURCE,
    "fp16": test_misc_intrinsics.FP16,
    "warp_intrinsics": test_warp_intrinsics.SOURCE,
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_assembles_for_sm_80(kiln, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(MODULES[name])
    result = kiln("build", path, "--emit", "cubin", "--arch", "80", "-o", tmp_path / "out")
    assert result.returncode == 0, f"{name} does not compile for sm_80:\n{result.stderr}"
