"""scripts/gpu-check.sh --dry-run: the device check's every step on this
machine (the bundle built here, kernels on the CPU engine, the image choice
against the stand-in driver; the host API's checks that need a GPU and
numba-cuda's side of the comparison skipped), so that the command a GPU
machine runs is known to work before one is lent, and fits what travels
there."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from checked_run import run_checked

pytestmark = pytest.mark.slow

PROGRAMS = 60


@pytest.fixture(scope="module")
def dry_run(repo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-check-out")
    env = dict(os.environ)
    env.pop("OUT", None)
    done = run_checked(["bash", repo_root / "scripts" / "gpu-check.sh", "--dry-run", "--programs",
                        str(PROGRAMS), "--out", out], env=env, timeout=1800)
    return out / "gpu-check.json", done.stdout


@pytest.fixture(scope="module")
def results(dry_run):
    return json.loads(dry_run[0].read_text())


def test_every_step_passes_on_the_cpu_engine_and_the_stand_in(results):
    assert results["failed"] == [], json.dumps(results, indent=1)[-4000:]
    assert results["device"]["name"].startswith("Kiln stand-in driver"), results["device"]
    assert results["runtime"]["wheel"].startswith("kiln_runtime-"), results["runtime"]
    assert re.search(r"manylinux_2_(\d+)_x86_64", results["runtime"]["wheel"])


def test_the_examples_run_from_the_bundle_without_the_compiler(results):
    summary = results["examples"]["summary"]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= 20, summary


def test_the_image_choice_follows_the_devices_architecture(results):
    choice = results["choice"]
    # The stand-in is an sm_80 device: only the sm_80 cubin launches, and
    # the sm_90 cubin and compute_90 PTX are refused with the reason.
    assert choice["cubin_sm80"]["said"].startswith("RAN"), choice
    for variant in ("cubin_sm90", "ptx_compute90"):
        assert "no binary for the GPU" in choice[variant]["said"], choice


def test_the_programs_outputs_are_compared_one_by_one(results):
    counts = results["programs"]["counts"]
    built = results["bundle"]["programs"]["built"]
    assert built >= PROGRAMS * 0.8, results["bundle"]["programs"]
    assert counts == {"match": built, "mismatch": 0, "error": 0, "missing": 0}, counts


def test_the_host_api_runs_on_the_cpu_engine_and_leaves_what_needs_a_gpu(results):
    checks = results["host_api"]["checks"]
    failed = {name: outcome for name, outcome in checks.items() if outcome["status"] == "failed"}
    assert not failed, failed
    for name in ("device_arrays", "stream_launch_and_async_copies", "events", "pinned_array",
                 "pinned_context"):
        assert checks[name]["status"] == "passed", (name, checks[name])
    for name in ("mapped_array", "cupy_array_into_kiln_kernel", "kiln_array_into_cupy",
                 "torch_tensor_into_kiln_kernel", "kiln_array_into_torch", "ipc"):
        assert checks[name]["status"] == "skipped", (name, checks[name])
        assert checks[name]["reason"].startswith("needs a GPU: "), (name, checks[name])


def test_side_by_side_times_every_kernel_on_kiln_and_skips_numba_cuda(results):
    side_by_side = results["side_by_side"]
    kiln = side_by_side["kiln"]
    assert kiln["target"] == "cpu", kiln
    for phase in ("cold", "warm"):
        first_call = kiln["first_call"][phase]
        assert first_call["first_call_s"] > 0, first_call
        assert set(first_call["first_launch_ms"]) >= set(side_by_side["kernels"]), first_call
    assert side_by_side["kernels"] == ["saxpy", "stencil", "block_sum", "mandelbrot", "matmul"]
    for name in side_by_side["kernels"]:
        kernel = kiln["kernels"][name]
        assert kernel["matches_numpy"] and kernel["kernel_ms"] > 0, (name, kernel)
        # What ptxas reported for the H200's cubin, read from the module's manifest.
        assert kernel["resources_of"] == "sm_90" and kernel["registers"] > 0, (name, kernel)
    assert kiln["launch_overhead_us"] > 0, kiln
    assert side_by_side["numba"] == {"skipped": "needs a GPU: numba-cuda runs kernels on a GPU only"}


def test_it_says_how_many_bytes_would_travel_within_the_limit(dry_run):
    _, stdout = dry_run
    found = re.search(r"would travel: (\d+) bytes \(repository (\d+), bundle (\d+)", stdout)
    assert found, stdout[-2000:]
    total, repository, bundle = map(int, found.groups())
    assert total == repository + bundle and total < 64 * 1024 * 1024, found.group(0)


def test_the_report_replaces_the_results_of_docs_gpu_md(repo_root, dry_run, tmp_path):
    doc = tmp_path / "gpu.md"
    shutil.copy(repo_root / "docs" / "gpu.md", doc)
    subprocess.run([sys.executable, repo_root / "scripts" / "gpu_check" / "gpu_check_report.py", dry_run[0],
                    "--doc", doc], check=True)
    text = doc.read_text()
    assert "a dry run: the stand-in driver and the CPU engine, no GPU" in text
    assert "every example against NumPy" in text and "(none yet)" not in text
    assert "| host API: ipc | skipped: needs a GPU: " in text
    assert "| | Kiln (CPU engine) | numba-cuda |" in text
    assert re.search(r"\| matmul \| 128 x 128 \| [0-9.]+ \| skipped \| \d+ / skipped \|", text), text
    assert text.startswith((repo_root / "docs" / "gpu.md").read_text().split("<!-- gpu-check")[0])
