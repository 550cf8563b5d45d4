"""scripts/gpu-check.sh --dry-run: the device check's every step on this
machine (the bundle built here, kernels on the CPU engine, the image choice
against the stand-in driver), so that the command a GPU machine runs is
known to work before one is lent, and fits what travels there."""

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


def test_it_says_how_many_bytes_would_travel_within_the_limit(dry_run):
    _, stdout = dry_run
    found = re.search(r"would travel: (\d+) bytes \(repository (\d+), bundle (\d+)", stdout)
    assert found, stdout[-2000:]
    total, repository, bundle = map(int, found.groups())
    assert total == repository + bundle and total < 64 * 1024 * 1024, found.group(0)


def test_the_report_replaces_the_results_of_docs_gpu_md(repo_root, dry_run, tmp_path):
    doc = tmp_path / "gpu.md"
    shutil.copy(repo_root / "docs" / "gpu.md", doc)
    subprocess.run([sys.executable, repo_root / "scripts" / "gpu_check" / "report.py", dry_run[0],
                    "--doc", doc], check=True)
    text = doc.read_text()
    assert "a dry run: the stand-in driver and the CPU engine, no GPU" in text
    assert "every example against NumPy" in text and "(none yet)" not in text
    assert text.startswith((repo_root / "docs" / "gpu.md").read_text().split("<!-- gpu-check")[0])
