"""Kiln builds with a CUDA 12 toolkit as well as CUDA 13's: CUDA 12.9's
ptxas (from NVIDIA's CUDA 12 wheel in .venv/wheelhouse, which
scripts/setup.sh downloads) assembles the PTX Kiln writes for every
architecture of its default list, each example at the PTX target Kiln
assembles that architecture's cubin from."""

import pathlib
import subprocess
import zipfile

import pytest

pytestmark = pytest.mark.slow

EXAMPLES = ["vector_add", "reductions", "monte_carlo_pi", "mandelbrot", "atomics", "histogram",
            "haversine", "transpose", "ufuncs", "rounding"]
# Kiln's default list (docs/cli.md): cubins for sm_75 to sm_90 from PTX of
# the same target, and for sm_100 and sm_120 from sm_90's PTX.
CUBINS_FROM_PTX = {"sm_75": ["sm_75"], "sm_80": ["sm_80"], "sm_86": ["sm_86"],
                   "sm_89": ["sm_89"], "sm_90": ["sm_90", "sm_100", "sm_120"]}


@pytest.fixture(scope="module")
def cuda12_ptxas(repo_root, tmp_path_factory):
    wheels = sorted((repo_root / ".venv" / "wheelhouse").glob("nvidia_cuda_nvcc_cu12-*.whl"))
    if not wheels:
        pytest.fail("no nvidia_cuda_nvcc_cu12 wheel in .venv/wheelhouse: scripts/setup.sh "
                    "downloads it")
    folder = tmp_path_factory.mktemp("cuda12")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        ptxas = pathlib.Path(wheel.extract("nvidia/cuda_nvcc/bin/ptxas", folder))
    ptxas.chmod(0o755)
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=True)
    assert "release 12." in version.stdout, version.stdout
    return ptxas


def test_cuda12_ptxas_assembles_kilns_ptx_for_every_default_architecture(
        kiln, repo_root, cuda12_ptxas, tmp_path):
    assembled = []
    for example in EXAMPLES:
        out = tmp_path / example
        built = kiln("build", repo_root / "examples" / f"{example}.py", "--emit", "ptx", "-o", out,
                     "--cache-dir", tmp_path / "cache")
        assert built.returncode == 0, built.stderr
        for ptx in sorted(out.glob("*.ptx")):
            target = ptx.name.rsplit(".", 2)[-2]
            assert target in CUBINS_FROM_PTX, f"{ptx.name}: a PTX target outside the default list"
            for arch in CUBINS_FROM_PTX[target]:
                done = subprocess.run([cuda12_ptxas, f"-arch={arch}", ptx, "-o",
                                       tmp_path / "out.cubin"], capture_output=True, text=True)
                assert done.returncode == 0, f"CUDA 12's ptxas, {ptx.name} for {arch}:\n" \
                                             f"{done.stderr}"
                assembled.append((ptx.name, arch))
    targets = {arch for _, arch in assembled}
    assert targets == {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}, targets
    assert len(assembled) >= 100, len(assembled)
