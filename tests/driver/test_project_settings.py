"""`kiln build`, `kiln cache` and `kiln targets` read [tool.kiln] of the
nearest pyproject.toml; each setting yields to the command line, then to
the environment (docs/cli.md, "Project settings")."""

import json
import os

import pytest

KERNEL = """\
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def scale(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] / out[i]
"""


@pytest.fixture
def project(tmp_path):
    """A project: pyproject.toml at the top, the kernels two folders down."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "kernels.py").write_text(KERNEL)
    return tmp_path


def environment(**variables):
    env = {key: value for key, value in os.environ.items()
           if key not in ("CUDAARCHS", "KILN_CACHE_DIR", "KILN_CACHE_MAX_SIZE", "KILN_CACHE",
                          "KILN_REMOTE_CACHE")}
    env["HOME"] = env.get("HOME", "/nonexistent")
    env.update(variables)
    return env


def ptx_archs(kiln, project, *flags, env=None, module=None):
    out = project / "out"
    for old in out.glob("*.ptx"):
        old.unlink()
    extra = ["--module", module] if module else []
    result = kiln("build", project / "src" / "pkg" / "kernels.py", "--emit", "ptx", "-o", out,
                  "--no-cache", *extra, *flags, env=env or environment())
    assert result.returncode == 0, result.stderr
    return sorted(path.name.split(".")[2] for path in out.glob("*.ptx"))


def test_archs_come_from_the_flag_then_the_environment_then_the_module_then_the_project(
        kiln, project):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\n\n[tool.kiln]\narchs = ["7.5", "8.6"]\n'
        'modules = [{name = "pkg.kernels", source = "src/pkg/kernels.py", archs = "90"}]\n')
    assert ptx_archs(kiln, project) == ["sm_75", "sm_86"], "[tool.kiln] archs was not read"
    assert ptx_archs(kiln, project, module="pkg.kernels") == ["sm_90"], (
        "the module's own archs did not take precedence over the project's")
    assert ptx_archs(kiln, project, env=environment(CUDAARCHS="80"), module="pkg.kernels") == \
        ["sm_80"], "$CUDAARCHS did not override pyproject.toml"
    assert ptx_archs(kiln, project, "--arch", "86", env=environment(CUDAARCHS="80")) == \
        ["sm_86"], "--arch did not override $CUDAARCHS"


def test_the_cache_folder_and_limit_come_from_the_project_below_flag_and_environment(
        kiln, project, tmp_path_factory):
    (project / "pyproject.toml").write_text(
        '[tool.kiln]\ncache-dir = "build/kiln-cache"\ncache-max-size = "300M"\n')
    kernels = project / "src" / "pkg" / "kernels.py"
    result = kiln("build", kernels, "--emit", "ptx", "-o", project / "out", "--arch", "80",
                  env=environment())
    assert result.returncode == 0, result.stderr
    assert (project / "build" / "kiln-cache" / "index.sqlite").is_file(), (
        "cache-dir, relative to pyproject.toml, was not the cache")
    limit = kiln("cache", "limit", cwd=project, env=environment())
    assert limit.returncode == 0, limit.stderr
    assert limit.stdout.strip() == "the cache limit is 300.0 MiB (configured)", limit.stdout

    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = kiln("build", kernels, "--emit", "ptx", "-o", project / "out", "--arch", "80",
                  env=environment(KILN_CACHE_DIR=str(elsewhere)))
    assert result.returncode == 0, result.stderr
    assert (elsewhere / "index.sqlite").is_file(), "$KILN_CACHE_DIR did not override cache-dir"
    limit = kiln("cache", "limit", cwd=project, env=environment(KILN_CACHE_MAX_SIZE="1G"))
    assert "1.0 GiB (environment)" in limit.stdout, limit.stdout


def test_compile_options_come_from_the_project_unless_the_command_line_says_otherwise(
        kiln, project):
    (project / "pyproject.toml").write_text('[tool.kiln]\nfastmath = true\nlineinfo = true\n')
    kernels = project / "src" / "pkg" / "kernels.py"

    def ptx(*flags):
        result = kiln("build", kernels, "--emit", "ptx", "-o", project / "out", "--arch", "80",
                      "--no-cache", *flags, env=environment())
        assert result.returncode == 0, result.stderr
        return (project / "out" / "scale.0.sm_80.ptx").read_text()

    configured = ptx()
    assert "div.approx" in configured and ".loc" in configured, (
        "fastmath = true and lineinfo = true did not reach the kernel")
    overridden = ptx("--no-fastmath", "--no-lineinfo")
    assert "div.approx" not in overridden and ".loc" not in overridden, (
        "--no-fastmath and --no-lineinfo did not override pyproject.toml")


def test_switchable_index_checks_come_from_the_project_unless_the_command_line_says_otherwise(
        kiln, project):
    kernels = project / "src" / "pkg" / "kernels.py"

    def copies(*flags):
        out = project / "out"
        result = kiln("build", kernels, "--emit", "object", "-o", out, "--no-cache", *flags,
                      env=environment())
        assert result.returncode == 0, result.stderr
        [manifest] = out.glob("*.manifest.json")
        return [spec["index_checks"]
                for spec in json.loads(manifest.read_text())["specializations"]]

    assert copies() == ["checked"], "a default build holds the copy boundscheck= asks for"
    assert copies("--switchable-index-checks") == ["both"]
    (project / "pyproject.toml").write_text('[tool.kiln]\nswitchable-index-checks = true\n')
    assert copies() == ["both"], "switchable-index-checks = true did not reach the build"
    assert copies("--no-switchable-index-checks") == ["checked"], (
        "--no-switchable-index-checks did not override pyproject.toml")


def test_ptxas_options_and_remote_caches_of_the_project_reach_their_tools(kiln, project):
    kernels = project / "src" / "pkg" / "kernels.py"
    (project / "pyproject.toml").write_text('[tool.kiln]\nptxas-options = ["--no-such-flag"]\n')
    result = kiln("build", kernels, "--emit", "cubin", "-o", project / "out", "--arch", "80",
                  "--no-cache", env=environment())
    assert result.returncode == 1 and "no-such-flag" in result.stderr, result.stderr

    (project / "pyproject.toml").write_text('[tool.kiln]\nremote-cache = "gopher://cache"\n')
    result = kiln("build", kernels, "--emit", "ptx", "-o", project / "out", "--arch", "80",
                  "--cache-dir", project / "cache", env=environment())
    assert result.returncode == 0, result.stderr
    assert "remote-cache in [tool.kiln] of" in result.stderr, (
        "a bad remote in pyproject.toml was not reported where it is written: " + result.stderr)
    result = kiln("build", kernels, "--emit", "ptx", "-o", project / "out", "--arch", "80",
                  "--cache-dir", project / "cache", env=environment(KILN_REMOTE_CACHE="off"))
    assert "remote" not in result.stderr, "KILN_REMOTE_CACHE=off did not override pyproject.toml"


def test_targets_shows_the_list_the_project_selects(kiln, project):
    (project / "pyproject.toml").write_text('[tool.kiln]\narchs = "80;90"\n')
    result = kiln("targets", cwd=project, env=environment())
    assert "Selected by pyproject.toml: 80;90" in result.stdout, result.stdout


@pytest.mark.parametrize("settings, message", [
    ('archs = ["7.5", 99]', ":2: [tool.kiln] archs '7.5;99'"),
    ('jobs = "many"', ":2: [tool.kiln] jobs must be a whole number"),
    ('opt = 2', ":2: [tool.kiln] opt must be 0 or 3"),
    ('fastmath = "yes"', ":2: [tool.kiln] fastmath must be true or false"),
    ('switchable-index-checks = 1', ":2: [tool.kiln] switchable-index-checks must be true or false"),
    ('cache-max-size = "lots"', ":2: [tool.kiln] cache-max-size"),
    ('cache-dir = ["a", "b"]', ":2: [tool.kiln] cache-dir must be a string"),
    ('archs = [', ":2:"),
])
def test_a_malformed_setting_is_an_error_naming_file_line_and_key(kiln, project, settings,
                                                                  message):
    (project / "pyproject.toml").write_text(f"[tool.kiln]\n{settings}\n")
    result = kiln("build", project / "src" / "pkg" / "kernels.py", "--emit", "ptx", "-o",
                  project / "out", env=environment())
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("kiln: error: " + str(project / "pyproject.toml") + message), (
        result.stderr)
    assert "Traceback" not in result.stderr and "terminate" not in result.stderr


def test_an_unknown_setting_is_named_in_a_warning(kiln, project):
    (project / "pyproject.toml").write_text('[tool.kiln]\narch = "80"\n')
    result = kiln("build", project / "src" / "pkg" / "kernels.py", "--emit", "ptx", "-o",
                  project / "out", "--no-cache", "--arch", "80", env=environment())
    assert result.returncode == 0, result.stderr
    assert "[tool.kiln] has no setting 'arch'" in result.stderr, result.stderr
