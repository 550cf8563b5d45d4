"""What the cache key covers: each input alone changes it;
comments and whitespace do not, and another kernel's edit changes only
its own IR and its image's."""

import json
import os
import pathlib

import pytest

from .conftest import ENTRIES, NOTE, WARM_HITS


def first_kernel_and_its_image(notes):
    """{(kind, target): 'hit'|'miss'} for kernel `first` and the image that
    holds it (the module's one image, named after it)."""
    return {(kind, target): state for state, kind, target, kernel in notes
            if kernel in ("first", "image kernels")}


@pytest.fixture
def warm(rig):
    module = rig.write("kernels.py")
    _, hits, misses, _, _ = rig.build(module)
    assert misses == ENTRIES
    return rig, module


def edited(rig, module, old, new):
    text = module.read_text()
    assert old in text
    module.write_text(text.replace(old, new))


MISSES = {
    "kiln version": ([], {"KILN_CACHE_TEST_KILN_VERSION": "99.0.0"}, None),
    "llvm version": ([], {"KILN_CACHE_TEST_LLVM_VERSION": "99.1.0"}, None),
    "arch": (["--arch", "86"], {}, None),
    "fastmath": (["--fastmath"], {}, None),
    "lineinfo": (["--lineinfo"], {}, None),
    "debug": (["--debug"], {}, None),
    "opt": (["--opt", "0"], {}, None),
    "max registers": (["--max-registers", "40"], {}, None),
    "ptxas flag": (["-Xptxas", "-O2"], {}, None),
    "signature": ([], {}, ("void(float32[::1])", "void(float64[::1])")),
    "kernel body": ([], {}, ("out[i] = helper(out[i])", "out[i] = helper(out[i]) + 1")),
    "device function": ([], {}, ("return x * SCALE", "return x * SCALE + 1")),
    "constant": ([], {}, ("SCALE = 3", "SCALE = 4")),
    "decorator option": ([], {}, ("@cuda.jit(void(float32[::1]))",
                                  "@cuda.jit(void(float32[::1]), fastmath=True)")),
}


@pytest.mark.parametrize("change", sorted(MISSES))
def test_each_key_input_alone_gives_a_miss(warm, change):
    rig, module = warm
    flags, env_changes, edit = MISSES[change]
    env = dict(rig.env, **env_changes)
    if edit:
        edited(rig, module, *edit)
    _, hits, misses, notes, _ = rig.build(module, *flags, env=env)
    states = first_kernel_and_its_image(notes)
    assert "miss" in states.values(), (change, notes)


def test_the_ptxas_version_is_in_the_key(warm, tmp_path):
    rig, module = warm
    real = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")).resolve()
    fake = tmp_path / "cuda"
    fake.mkdir()
    for child in real.iterdir():
        if child.name != "version.json":
            (fake / child.name).symlink_to(child)
    (fake / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK",
                                                            "version": "99.9.9"}}))
    env = dict(rig.env, CUDA_HOME=str(fake))
    env.pop("CUDA_PATH", None)
    _, hits, misses, notes, _ = rig.build(module, env=env)
    assert hits == 0 and misses == ENTRIES, notes


HITS = {
    "comment": ("# a comment", "# another comment, longer"),
    "whitespace": ("    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = helper",
                   "    i  =  cuda.grid( 1 )\n\n    if i < out.size:\n        out[i] = helper"),
    "docstring": ("def first(out):\n", "def first(out):\n    \"\"\"Doubles.\"\"\"\n"),
    "lines above": ("SCALE = 3\n", "SCALE = 3\n\n\n\nUNUSED = 7\n"),
}


@pytest.mark.parametrize("change", sorted(HITS))
def test_edits_that_do_not_change_code_give_hits(warm, change):
    rig, module = warm
    edited(rig, module, *HITS[change])
    _, hits, misses, notes, _ = rig.build(module)
    assert (hits, misses) == (WARM_HITS, 0), (change, notes)


def test_a_rebuild_after_editing_one_kernel_recompiles_it_and_relinks_its_image(warm):
    rig, module = warm
    edited(rig, module, "out[i] = i + 1", "out[i] = i + 2")
    _, hits, misses, notes, _ = rig.build(module)
    assert {kernel for state, _, _, kernel in notes if state == "miss"} == {
        "second", "image kernels"}
    assert hits == 1, "the unchanged kernel's LLVM IR was not reused"


def test_no_cache_and_kiln_cache_0_neither_read_nor_write(rig):
    module = rig.write("kernels.py")
    result, hits, misses, notes, _ = rig.build(module, "--no-cache")
    assert not notes and not (rig.cache / "index.sqlite").exists()
    result, hits, misses, notes, _ = rig.build(module, env=dict(rig.env, KILN_CACHE="0"))
    assert not notes and not (rig.cache / "index.sqlite").exists()


def test_the_cache_location_follows_the_environment(rig, tmp_path):
    module = rig.write("kernels.py")
    env = dict(rig.env)
    del env["KILN_CACHE_DIR"]
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    rig.build(module, env=env)
    assert (tmp_path / "xdg" / "kiln" / "index.sqlite").exists()
    env.pop("XDG_CACHE_HOME")
    env["HOME"] = str(tmp_path / "home")
    rig.build(module, env=env)
    assert (tmp_path / "home" / ".cache" / "kiln" / "index.sqlite").exists()
    rig.build(module, "--cache-dir", tmp_path / "flag", env=env)
    assert (tmp_path / "flag" / "index.sqlite").exists()


def test_a_network_file_system_uses_a_rollback_journal(rig):
    module = rig.write("kernels.py")
    env = dict(rig.env, KILN_CACHE_TEST_NETWORK_FS="1")
    rig.build(module, env=env)
    _, hits, misses, _, _ = rig.build(module, env=env)
    assert misses == 0
    stats = json.loads(rig.run("cache", "stats", "--json", env=env, check=True).stdout)
    assert "rollback journal" in stats["journal"]
    assert not (rig.cache / "index.sqlite-wal").exists()


def test_a_local_cache_leaves_its_write_ahead_log_to_sqlites_checkpoints(rig):
    """Closing the index does not checkpoint it (which syncs to disk): the
    next process finds the entries in the log, and hits."""
    module = rig.write("kernels.py")
    rig.build(module)
    log = rig.cache / "index.sqlite-wal"
    assert log.exists() and log.stat().st_size > 0, "the build checkpointed the index on close"
    _, hits, misses, _, _ = rig.build(module)
    assert misses == 0 and hits > 0


def test_host_code_with_both_index_check_copies_has_a_key_of_its_own(rig):
    """A build with one copy of each kernel's body must not serve one that
    asks for both (--switchable-index-checks), nor the other way round."""
    module = rig.write("kernels.py")

    def host_notes(*flags):
        result = rig.run("build", module, "--emit", "object", "-o", rig.root / "objects", "-v",
                         *flags)
        assert result.returncode == 0, result.stderr
        notes = {m[4]: "miss" if m[1] == "compiled" else "hit"
                 for m in NOTE.finditer(result.stderr) if m[2] == "host"}
        assert notes, f"the build reported no host code:\n{result.stderr}"
        return set(notes.values())

    assert host_notes() == {"miss"}
    assert host_notes("--switchable-index-checks") == {"miss"}, (
        "host code with one copy served a build of both")
    assert host_notes() == {"hit"}
    assert host_notes("--switchable-index-checks") == {"hit"}
