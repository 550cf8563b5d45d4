"""`kiln targets`: the CUDA toolkit, the architectures and how lists are read."""

import json
import os

import pytest

CUDA13_ARCHS = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121]


def environment(**changes):
    """The test's environment with `changes` applied (None removes a variable)."""
    env = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def targets_json(kiln, *args, **env):
    result = kiln("targets", "--json", *args, env=environment(**env))
    assert result.stdout, f"kiln targets printed nothing; stderr:\n{result.stderr}"
    return result.returncode, json.loads(result.stdout)


def test_help_lists_the_targets_subcommand(kiln):
    result = kiln("--help")
    assert result.returncode == 0
    assert "targets" in result.stdout


def test_text_names_the_toolkit_architectures_and_default(kiln):
    result = kiln("targets", env=environment(CUDAARCHS=None))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert out.startswith("CUDA toolkit ")
    for component in ("ptxas", "fatbinary", "nvcc", "libdevice", "nvJitLink"):
        assert f"\n  {component} " in out
    for arch in CUDA13_ARCHS:
        assert f"\n  sm_{arch} " in out
    assert "sm_100   sm_90 PTX" in out
    assert "sm_88    sm_87 PTX" in out
    assert "compute_90  (the newest PTX Kiln embeds)" in out
    assert "Default: 75-real;80-real;86-real;89-real;90;100-real;120-real\n" in out
    assert "sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120 cubins, compute_90 PTX" in out
    assert ("--arch LIST, else $CUDAARCHS, else archs in [tool.kiln] of\n"
            "the nearest pyproject.toml, else the default") in out
    assert "Selected by" not in out


def test_json_describes_the_toolkit(kiln):
    status, data = targets_json(kiln, CUDAARCHS=None)
    assert status == 0
    toolkit = data["toolkit"]
    assert toolkit["found"] is True
    assert toolkit["version"].startswith("13.")
    assert toolkit["version_source"] in ("version.json", "ptxas --version")
    assert set(toolkit["components"]) == {"ptxas", "fatbinary", "nvcc", "libdevice", "nvJitLink"}
    assert all(path and os.path.exists(path) for path in toolkit["components"].values())
    assert toolkit["nvjitlink_version"].startswith("13.")


def test_json_describes_how_each_architecture_is_built(kiln):
    _, data = targets_json(kiln, CUDAARCHS=None)
    archs = {entry["arch"]: entry for entry in data["architectures"]}
    assert list(archs) == CUDA13_ARCHS
    assert data["newest_ptx"] == 90
    for arch, entry in archs.items():
        expected_from = 90 if arch > 90 else 87 if arch == 88 else arch
        assert entry["cubin_from_ptx"] == expected_from
        assert entry["ptx"] == (arch <= 90 and arch != 88)
        assert ("no_ptx_reason" in entry) == (not entry["ptx"])
    assert "JIT-compiles" in archs[120]["no_ptx_reason"]
    assert data["default"] == {
        "list": "75-real;80-real;86-real;89-real;90;100-real;120-real",
        "cubins": [75, 80, 86, 89, 90, 100, 120],
        "ptx": [90],
        "ptx_targets": [75, 80, 86, 89, 90],
    }
    assert data["selected"]["source"] == "the default"


def test_cudaarchs_is_read_when_no_arch_is_given(kiln):
    status, data = targets_json(kiln, CUDAARCHS="7.5 8.0 9.0+PTX")
    assert status == 0
    assert data["selected"] == {
        "source": "CUDAARCHS",
        "text": "7.5 8.0 9.0+PTX",
        "list": "75-real;80-real;90",
        "cubins": [75, 80, 90],
        "ptx": [90],
        "ptx_targets": [75, 80, 90],
    }
    result = kiln("targets", env=environment(CUDAARCHS="80-real;90-virtual"))
    assert "Selected by CUDAARCHS: 80-real;90-virtual\n" in result.stdout


def test_arch_option_wins_over_cudaarchs(kiln):
    status, data = targets_json(kiln, "--arch", "all-major", CUDAARCHS="80")
    assert status == 0
    assert data["selected"]["source"] == "--arch"
    assert data["selected"]["cubins"] == [75, 80, 90, 100, 110, 120]
    assert data["selected"]["ptx"] == [90]


@pytest.mark.parametrize("arch_list, message", [
    ("80;100", "compute_100 PTX cannot be embedded"),
    ("120-virtual", "the newest PTX Kiln emits is compute_90"),
    ("sm_90a", "architecture-specific"),
    ("70", "no longer supported by CUDA 13"),
    ("volta", "not an architecture"),
])
def test_invalid_lists_exit_2_with_a_clear_error(kiln, arch_list, message):
    result = kiln("targets", "--arch", arch_list, env=environment(CUDAARCHS=None))
    assert result.returncode == 2, "a bad --arch is a usage error"
    assert f"kiln: error: invalid architecture list --arch '{arch_list}': " in result.stderr
    assert message in result.stderr
    # Everything else is still shown.
    assert "Architectures of CUDA 13" in result.stdout


def test_invalid_cudaarchs_names_the_variable(kiln):
    status, data = targets_json(kiln, CUDAARCHS="75;abc")
    assert status == 1
    assert data["selected"]["source"] == "CUDAARCHS"
    assert "CUDAARCHS='75;abc' (from the environment)" in data["selected"]["error"]


def test_native_without_a_gpu_is_a_clear_error(kiln):
    result = kiln("targets", "--arch", "native", env=environment(CUDAARCHS=None))
    if result.returncode == 0:
        pytest.skip("this machine has a GPU")
    assert result.returncode == 1
    assert "'native' means the GPUs of this machine, but" in result.stderr
    assert "name the architectures instead" in result.stderr


def test_cuda_home_without_a_toolkit_is_an_error(kiln, tmp_path):
    status, data = targets_json(kiln, CUDA_HOME=str(tmp_path), CUDAARCHS=None)
    assert status == 1
    assert data["toolkit"]["found"] is False
    assert f"$CUDA_HOME is '{tmp_path}', which holds no CUDA toolkit" in data["toolkit"]["error"]
    assert "bin/ptxas" in data["toolkit"]["error"]
    result = kiln("targets", env=environment(CUDA_HOME=str(tmp_path / "missing"), CUDAARCHS=None))
    assert result.returncode == 1
    assert result.stdout.startswith("CUDA toolkit: not found\n")
    assert f"kiln: error: $CUDA_HOME is '{tmp_path / 'missing'}', which is not a directory" \
        in result.stderr
