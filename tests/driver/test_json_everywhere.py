"""Every command that reports something takes --json and then prints one
JSON object on stdout, nothing else: the commands a script would run one
after another in a project, from build to cache export and keys."""

import json
import os

import pytest

KERNEL = """\
from numba import cuda


@cuda.jit("void(float32[::1])")
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2
"""

# Commands without a result to report: shell completion and the man page.
NOT_REPORTS = {"completion", "man-page"}


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "kernels.py").write_text(KERNEL)
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"),
               KILN_CONFIG_DIR=str(tmp_path / "config"))
    for variable in ("KILN_SIGNING_KEY", "KILN_TRUSTED_KEYS", "KILN_REMOTE_CACHE", "CUDAARCHS"):
        env.pop(variable, None)
    return tmp_path, env


def json_of(kiln, workspace, *args):
    folder, env = workspace
    result = kiln(*args, "--json", cwd=folder, env=env)
    assert result.returncode == 0, f"kiln {' '.join(map(str, args))} --json: {result.stderr}"
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as error:
        pytest.fail(f"kiln {' '.join(map(str, args))} --json printed more than JSON ({error}):\n"
                    + result.stdout)


def test_a_session_of_commands_all_answer_in_json(kiln, workspace):
    folder, _ = workspace
    kernels = folder / "pkg" / "kernels.py"
    assert json_of(kiln, workspace, "check", kernels)
    assert json_of(kiln, workspace, "targets")["selected"]
    built = json_of(kiln, workspace, "build", kernels, "--module", "pkg.kernels", "-o",
                    folder / "pkg", "--arch", "80", "--ext-suffix", ".so")
    assert built["ok"] and built["written"] == [str(folder / "pkg" / "kernels.so")]
    assert json_of(kiln, workspace, "inspect", folder / "pkg" / "kernels.so")["module"] == \
        "pkg.kernels"
    assert json_of(kiln, workspace, "audit", folder / "pkg" / "kernels.so")

    assert json_of(kiln, workspace, "cache", "stats")
    assert json_of(kiln, workspace, "cache", "list")
    assert json_of(kiln, workspace, "cache", "limit", "1G") == {
        "limit": 1 << 30, "source": "stored",
        "stored_in": str(folder / "cache" / "index.sqlite")}
    assert json_of(kiln, workspace, "cache", "limit") == {"limit": 1 << 30, "source": "stored"}
    verified = json_of(kiln, workspace, "cache", "verify")
    assert verified["problems"] == [] and verified["entries"] > 0, verified

    generated = json_of(kiln, workspace, "cache", "key", "generate", "--name", "ci")
    assert generated["name"] == "ci" and generated["public_key"].startswith("kiln-ed25519 ")
    exported_key = json_of(kiln, workspace, "cache", "key", "export-public", "ci")
    assert exported_key["fingerprint"] == generated["fingerprint"]
    trusted = json_of(kiln, workspace, "cache", "key", "trust", generated["public_key"])
    assert [key["name"] for key in trusted["trusted"]] == ["ci"]
    keys = json_of(kiln, workspace, "cache", "key", "list")
    assert [key["name"] for key in keys["signing_keys"]["keys"]] == ["ci"]
    assert [key["name"] for key in keys["trusted_keys"]["keys"]] == ["ci"]

    archive = folder / "entries.tar.zst"
    exported = json_of(kiln, workspace, "cache", "export", archive, "--sign-with", "ci")
    assert exported["signer"].startswith("'ci'") and exported["entries"] == verified["entries"]
    imported = json_of(kiln, workspace, "cache", "import", archive)
    assert imported["entries"] == exported["entries"]
    assert json_of(kiln, workspace, "cache", "key", "untrust", "ci")["untrusted"][0]["name"] == "ci"
    assert json_of(kiln, workspace, "cache", "prune", "--max-size", "0")["bytes"] == 0
    assert json_of(kiln, workspace, "cache", "clear") == {"cleared": str(folder / "cache")}

    added = json_of(kiln, workspace, "signatures", "add", "pkg.kernels.double",
                    "void(float64[::1])", "--file", folder / "kiln-signatures.toml")
    assert added["kernel"] == "pkg.kernels.double"
    (folder / "kiln-signatures.toml").write_text(
        '[signatures]\n"pkg.kernels.gone" = ["void(float32[::1])"]\n')
    pruned = json_of(kiln, workspace, "signatures", "prune", "--dry-run")
    assert pruned["would_remove"] == ["pkg.kernels.gone"], pruned
    assert json_of(kiln, workspace, "signatures", "list")


def leaf_commands(kiln, path=()):
    """Every command kiln's --help lists, with its subcommands', as paths."""
    result = kiln(*path, "--help")
    lines = result.stdout.splitlines()
    names = []
    if "Subcommands:" in lines:
        for line in lines[lines.index("Subcommands:") + 1:]:
            if not line.startswith("  ") or not line.strip():
                break
            names.append(line.split()[0])
    if not names:
        return [path]
    return [leaf for name in names for leaf in leaf_commands(kiln, (*path, name))]


def test_every_command_that_reports_takes_json(kiln):
    leaves = leaf_commands(kiln)
    assert ("build",) in leaves and ("cache", "key", "trust") in leaves, leaves
    lacking = [" ".join(path) for path in leaves
               if path[0] not in NOT_REPORTS and "--json" not in kiln(*path, "--help").stdout]
    assert not lacking, f"commands without --json: {lacking}"
