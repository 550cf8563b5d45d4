"""How the device check judges and reports what a GPU run finds, on results
shaped as a GPU machine writes them (there is none here, and the dry run
takes the CPU engine's paths): a host API check that fails fails the run, a
skipped one does not; Kiln's side of the side-by-side step is judged,
numba-cuda's only reported; occupancy comes from the resident blocks; and
gpu_check_report.py renders both steps."""

import copy
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts" / "gpu_check"))

import device_checks  # noqa: E402
import gpu_check_report as report  # noqa: E402
import side_by_side_runs  # noqa: E402

H200 = {"driver_cuda_version": "13.0", "devices": 1, "name": "NVIDIA H200",
        "compute_capability": [9, 0], "multiprocessors": 132, "max_threads_per_multiprocessor": 2048}


def side(registers, resident_blocks, kernel_ms):
    kernels = {name: {"checked_shape": [64], "timed_shape": [1 << 26], "matches_numpy": True,
                      "kernel_ms": kernel_ms, "runs": 10, "threads_per_block": 256,
                      "registers": registers, "shared_bytes": 0, "resident_blocks": resident_blocks}
               for name in side_by_side_runs.KERNELS}
    first_call = {"runtime_imported_s": 0.2, "module_import_s": 0.01, "first_call_s": 0.3,
                  "first_launch_ms": dict.fromkeys(side_by_side_runs.KERNELS, 0.1)}
    return {"target": "cuda", "first_call": {"cold": dict(first_call), "warm": dict(first_call)},
            "kernels": kernels, "launch_overhead_us": 3.0}


@pytest.fixture
def gpu_run():
    """A run on an H200 where every step passed."""
    results = {
        "date": "2026-01-01 00:00:00 UTC", "target": "cuda", "device": dict(H200),
        "machine": {"python": "3.12.3", "numpy": "2.1.0"}, "bundle": {"kiln": "kiln 0.1.0"},
        "runtime": {"wheel": "kiln_runtime-0.1.0-cp311-abi3-manylinux_2_28_x86_64.whl"},
        "examples": {"passed": True, "summary": "24 passed"},
        "choice": {"cubin_sm90": {"said": "RAN right", "expected": "RAN right", "as_expected": True}},
        "programs": {"counts": {"match": 3, "mismatch": 0, "error": 0, "missing": 0}},
        "host_api": {"counts": {"passed": 2, "failed": 0, "skipped": 1},
                     "checks": {"device_arrays": {"status": "passed"},
                                "events": {"status": "passed", "details": {"elapsed_ms": 0.2}},
                                "kiln_array_into_torch": {"status": "skipped",
                                                          "reason": "torch does not import"}}},
        "side_by_side": {"kernels": list(side_by_side_runs.KERNELS),
                         "occupancy_method": side_by_side_runs.OCCUPANCY_METHOD,
                         "kiln": side(12, 132 * 8, 0.16), "numba": side(14, 132 * 4, 0.17)},
    }
    for name in ("kiln", "numba"):
        for kernel in results["side_by_side"][name]["kernels"].values():
            side_by_side_runs.add_occupancy(kernel, H200)
    return results


def test_a_run_where_everything_passed_has_no_failed_step(gpu_run):
    assert device_checks.failed_checks(gpu_run) == []


def test_occupancy_is_resident_warps_over_the_warps_a_multiprocessor_holds(gpu_run):
    kiln = gpu_run["side_by_side"]["kiln"]["kernels"]["saxpy"]
    numba = gpu_run["side_by_side"]["numba"]["kernels"]["saxpy"]
    # 8 blocks of 8 warps fill the H200's 64 warps; 4 of them fill half.
    assert (kiln["blocks_per_multiprocessor"], kiln["occupancy"]) == (8, 1.0)
    assert (numba["blocks_per_multiprocessor"], numba["occupancy"]) == (4, 0.5)


def test_a_failed_host_api_check_fails_the_run_and_says_why(gpu_run):
    checks = gpu_run["host_api"]["checks"]
    checks["ipc"] = {"status": "failed", "message": "AssertionError: the child process could not open the handle"}
    gpu_run["host_api"]["counts"]["failed"] = 1
    assert device_checks.failed_checks(gpu_run) == ["host_api"]
    text = report.section(gpu_run)
    assert "| host API: ipc | failed: AssertionError: the child process could not open the handle |" in text
    assert "| host API: kiln array into torch | skipped: torch does not import |" in text
    assert "| host API: events | passed: elapsed_ms 0.2 |" in text


def test_numba_cudas_failures_are_reported_not_judged(gpu_run):
    numba = gpu_run["side_by_side"]["numba"]
    numba["kernels"]["matmul"] = {"error": "CudaAPIError: 999"}
    numba["first_call"]["cold"] = {"error": "first-call timed out after 120 s"}
    assert device_checks.failed_checks(gpu_run) == []
    text = report.section(gpu_run)
    assert "- numba-cuda: matmul: CudaAPIError: 999" in text
    assert "- numba-cuda: first call, cold: first-call timed out after 120 s" in text


def test_a_kiln_kernel_that_differs_from_numpy_fails_the_run(gpu_run):
    broken = copy.deepcopy(gpu_run)
    broken["side_by_side"]["kiln"]["kernels"]["stencil"]["matches_numpy"] = False
    assert device_checks.failed_checks(broken) == ["side_by_side"]
    assert "| stencil | 67,108,864 | 0.16 (differs from NumPy) | 0.17 |" in report.section(broken)


def test_the_report_puts_kiln_and_numba_cuda_side_by_side(gpu_run):
    text = report.section(gpu_run)
    assert "| | Kiln | numba-cuda |" in text
    assert "| first call, cold: process start to the first launch finished | 0.3 s | 0.3 s |" in text
    assert "| launch overhead: median of 1,000 back-to-back launches of an empty kernel | 3 µs | 3 µs |" in text
    assert "| saxpy | 67,108,864 | 0.16 | 0.17 | 12 / 14 | 100% (8 blocks) / 50% (4 blocks) |" in text
    assert "numba-cuda: needs a GPU" not in text
