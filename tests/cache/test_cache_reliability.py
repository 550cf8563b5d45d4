"""The specialization cache under concurrency, crashes and damage.

Real `kiln` processes, real files; nothing is mocked.
"""

import contextlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tarfile
import time

import pytest

from .conftest import ENTRIES, MODULE, WARM_HITS, outputs


def variant(n):
    return MODULE.replace("SCALE = 3", f"SCALE = {100 + n}")


def start(rig, module, out):
    return subprocess.Popen(
        rig.command(*rig.build_args(module, out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=rig.env,
    )


def test_sixteen_builds_of_one_module_share_one_cache(rig):
    module = rig.write("kernels.py")
    procs = [start(rig, module, rig.root / f"o{i}") for i in range(16)]
    results = [(p, *p.communicate(timeout=300)) for p in procs]
    for proc, _, err in results:
        assert proc.returncode == 0, err
    reference = outputs(rig.root / "o0")
    assert len(reference) == 1, "the module's kernels are not in one fat binary"
    for i in range(1, 16):
        assert outputs(rig.root / f"o{i}") == reference
    keys = [entry["key"] for entry in rig.entries()]
    assert len(keys) == len(set(keys)) == ENTRIES
    assert rig.verify().returncode == 0


def test_sixteen_builds_of_different_modules_leave_a_consistent_cache(rig):
    modules = [rig.write(f"kernels{i}.py", variant(i)) for i in range(16)]
    procs = [start(rig, m, rig.root / f"o{i}") for i, m in enumerate(modules)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    result = rig.verify()
    assert result.returncode == 0, result.stdout
    assert "0 problems" in result.stdout
    # `second` is the same in every module but its symbol: one per module.
    assert rig.stats()["entries"] == 16 * ENTRIES


@pytest.mark.slow
def test_sigkill_during_cache_writes_never_serves_a_corrupt_entry(rig):
    module = rig.write("kernels.py")
    reference_out = rig.root / "reference"
    subprocess.run(
        rig.command(*rig.build_args(module, reference_out, "--no-cache")), check=True,
        capture_output=True, env=rig.env)
    reference = outputs(reference_out)
    rng = random.Random(5)
    # How long a cold build takes, to kill within it.
    began = time.monotonic()
    rig.build(module)
    cold = time.monotonic() - began
    for attempt in range(50):
        rig.run("cache", "clear", check=True)
        proc = start(rig, module, rig.root / "killed")
        time.sleep(rng.uniform(0.0, cold * 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        result, hits, misses, notes, out = rig.build(module)
        assert outputs(out) == reference, f"attempt {attempt}"
        shutil.rmtree(out)
    stats = rig.stats()
    assert stats["corrupt_reads"] == 0
    report = rig.verify()
    assert report.returncode == 0, f"kiln cache verify found problems after killed builds:\n{report.stdout}"
    assert not any(line.startswith("problem:") for line in report.stdout.splitlines()), report.stdout


def blob_starting_with(rig, prefix):
    for blob in rig.blobs():
        if blob.read_bytes().startswith(prefix):
            return blob
    raise AssertionError(f"no blob starts with {prefix!r}")


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty"])
def test_damaged_blobs_are_detected_counted_and_rebuilt(rig, damage):
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    reference = outputs(first)
    cubin = blob_starting_with(rig, b"\x7fELF")
    data = bytearray(cubin.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x40
    elif damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data = b""
    cubin.write_bytes(bytes(data))
    result, hits, misses, notes, out = rig.build(module)
    assert "damaged" in result.stderr
    assert result.stderr.count("warning") == 1
    assert ("miss", "cubin", "sm_80") in [n[:3] for n in notes]
    assert outputs(out) == reference
    assert rig.stats()["corrupt_reads"] == 1
    _, hits, misses, _, out = rig.build(module)
    assert misses == 0 and outputs(out) == reference
    assert rig.verify().returncode == 0


def index_files(rig):
    return [rig.cache / name for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm")]


def checkpoint(rig):
    """Moves the index's write-ahead log into its database file, as SQLite's
    automatic checkpoint does once the log is long: until then the log may
    hold every page, and damage to the database file alone goes unseen."""
    with contextlib.closing(sqlite3.connect(rig.cache / "index.sqlite")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage"])
def test_a_lost_or_damaged_index_is_rebuilt_from_the_blobs(rig, damage):
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    reference = outputs(first)
    checkpoint(rig)
    index = rig.cache / "index.sqlite"
    if damage == "delete":
        for path in index_files(rig):
            if path.exists():
                path.unlink()
    elif damage == "truncate":
        with open(index, "r+b") as f:
            f.truncate(index.stat().st_size // 2)
    else:
        index.write_bytes(os.urandom(index.stat().st_size))
    result, hits, misses, notes, out = rig.build(module)
    assert misses == 0 and hits == WARM_HITS, result.stderr
    assert result.stderr.count("warning") == 1, result.stderr
    assert f"rebuilt it from {ENTRIES} entries" in result.stderr
    assert outputs(out) == reference
    assert rig.verify().returncode == 0
    if damage != "delete":
        assert list(rig.cache.glob("index.sqlite.damaged-*"))


def test_a_row_without_its_blob_heals(rig):
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    reference = outputs(first)
    blob_starting_with(rig, b"\x7fELF").unlink()
    assert rig.verify().returncode == 1
    result, hits, misses, notes, out = rig.build(module)
    assert misses >= 1 and outputs(out) == reference
    assert rig.verify().returncode == 0
    _, hits, misses, _, _ = rig.build(module)
    assert misses == 0


def test_a_blob_without_its_row_heals(rig):
    module = rig.write("kernels.py")
    rig.build(module)
    # A stray blob, and an entry whose row is gone.
    stray = rig.cache / "objects" / "00" / ("0" * 62)
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"stray")
    with sqlite3.connect(rig.cache / "index.sqlite") as db:
        key = db.execute("SELECT key FROM entries WHERE kind = 'cubin' LIMIT 1").fetchone()[0]
        db.execute("DELETE FROM entry_blobs WHERE key = ?", (key,))
        db.execute("DELETE FROM entries WHERE key = ?", (key,))
    report = rig.verify()
    assert report.returncode == 0, "leftovers are harmless: " + report.stdout
    assert "leftover: entry" in report.stdout and "not in the index" in report.stdout
    assert "belongs to no entry" in report.stdout
    repaired = rig.verify("--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert not stray.exists()
    assert rig.verify().returncode == 0
    _, hits, misses, _, _ = rig.build(module)
    assert misses == 0


def mount_tmpfs(path, options):
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True).returncode == 0


def test_a_read_only_cache_folder_serves_its_entries_and_stores_none(rig):
    module = rig.write("kernels.py")
    other = rig.write("other.py", variant(1))
    reference = outputs(rig.build(module, "--no-cache")[4])
    other_reference = outputs(rig.build(other, "--no-cache")[4])
    if os.geteuid() == 0:
        if not mount_tmpfs(rig.cache, "size=4m"):
            pytest.skip("running as root without permission to mount a tmpfs")
        make_read_only = lambda: subprocess.run(  # noqa: E731
            ["mount", "-o", "remount,ro", str(rig.cache)], check=True)
        undo = lambda: subprocess.run(["umount", str(rig.cache)])  # noqa: E731
    else:
        make_read_only = lambda: [os.chmod(p, 0o555) for p in (rig.cache, rig.cache / "objects")]  # noqa: E731
        undo = lambda: [os.chmod(p, 0o755) for p in (rig.cache, rig.cache / "objects")]  # noqa: E731
    try:
        rig.build(module)
        make_read_only()
        result, hits, misses, notes, out = rig.build(module)
        assert (hits, misses) == (WARM_HITS, 0), result.stderr
        assert "warning" not in result.stderr, result.stderr
        assert outputs(out) == reference

        result, hits, misses, notes, out = rig.build(other)
        assert misses > 0
        assert result.stderr.count("warning") == 1, result.stderr
        assert "is read-only: builds use its entries but store none" in result.stderr
        assert outputs(out) == other_reference

        stats = rig.stats()
        assert stats["entries"] == ENTRIES and stats["read_only"], stats
        verified = rig.verify()
        assert verified.returncode == 0, verified.stdout + verified.stderr
        pruned = rig.run("cache", "prune")
        assert pruned.returncode == 1 and "is read-only; this command changes it" in pruned.stderr
    finally:
        undo()


def test_a_full_disk_builds_uncached_with_one_warning(rig):
    module = rig.write("kernels.py")
    reference = outputs(rig.build(module, "--no-cache")[4])
    if os.geteuid() != 0 or not mount_tmpfs(rig.cache, "size=64k"):
        pytest.skip("needs root to mount a small tmpfs")
    try:
        result, hits, misses, notes, out = rig.build(module)
    finally:
        subprocess.run(["umount", str(rig.cache)])
    assert result.stderr.count("warning") == 1, result.stderr
    assert "No space left on device" in result.stderr or "full" in result.stderr
    assert outputs(out) == reference


def test_a_file_size_limit_builds_uncached_with_one_warning(rig):
    import resource

    module = rig.write("kernels.py")
    reference = outputs(rig.build(module, "--no-cache")[4])
    rig.run("cache", "stats", check=True)  # the index exists, small

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (12 * 1024, 12 * 1024))

    out = rig.root / "limited"
    result = subprocess.run(rig.command(*rig.build_args(module, out)), capture_output=True,
                            text=True, env=rig.env, preexec_fn=limit)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("warning") == 1, result.stderr
    assert outputs(out) == reference


@pytest.mark.slow
def test_the_size_limit_evicts_least_recently_used_entries(rig):
    a, b, c = (rig.write(f"m{n}.py", variant(n)) for n in range(3))
    rig.build(a)
    size_one = rig.stats()["bytes"]
    time.sleep(1.1)
    rig.build(b)
    time.sleep(1.1)
    rig.build(a)  # a is now more recent than b
    time.sleep(1.1)
    limit = int(size_one * 2.05)
    rig.build(c, "--max-size", str(limit))
    stats = rig.stats()
    assert stats["bytes"] <= limit
    assert stats["evictions"] >= 1
    modules = [entry["name"].split(".")[0] for entry in rig.entries()]
    # m0's second build read only its image's entries; its kernels' IR is
    # older than m1's entries, which go next.
    assert modules.count("m2") == ENTRIES and modules.count("m0") >= WARM_HITS
    assert modules.count("m1") < ENTRIES
    # Evicted entries are misses again; the survivors hit.
    _, hits, misses, _, _ = rig.build(a)
    assert misses == 0
    assert rig.verify().returncode == 0


def test_concurrent_prune_and_builds_do_not_fail(rig):
    modules = [rig.write(f"k{i}.py", variant(i)) for i in range(8)]
    rig.build(modules[0])
    size_one = rig.stats()["bytes"]
    builds = [start(rig, m, rig.root / f"o{i}") for i, m in enumerate(modules)]
    prunes = [
        subprocess.Popen(rig.command("cache", "prune", "--max-size", str(size_one * 2)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=rig.env)
        for _ in range(6)
    ]
    for proc in builds + prunes:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    for i in range(8):
        assert len(outputs(rig.root / f"o{i}")) == 1
    report = rig.verify()
    assert report.returncode == 0, report.stdout


def test_a_deeply_nested_metadata_blob_is_a_damaged_entry(rig, tmp_path):
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    reference = outputs(first)
    nested = b"kiln-cache-entry 1\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n"
    planted = rig.plant_blob(nested)
    for path in index_files(rig):  # the index is rebuilt from the blobs, which parses each
        path.unlink(missing_ok=True)

    result, _, _, _, out = rig.build(module)
    assert outputs(out) == reference
    verified = rig.verify()
    assert verified.returncode in (0, 1) and "Traceback" not in verified.stderr, verified.stderr
    assert verified.returncode >= 0, f"kiln cache verify died of signal {-verified.returncode}"

    archive = tmp_path / "nested.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(planted, arcname=str(planted.relative_to(rig.cache)))
    # Unsigned, so parsed only when the user skips the signature check.
    imported = rig.run("cache", "import", archive, "--insecure-skip-signature")
    assert imported.returncode == 1, f"import ended with {imported.returncode}: {imported.stderr}"
    assert "nests deeper than 64 levels" in imported.stderr, imported.stderr


def test_what_a_killed_build_leaves_is_reported_as_harmless_leftovers(rig):
    module = rig.write("kernels.py")
    rig.build(module)
    # A build killed after writing its blobs, before publishing its entry:
    # blobs of no entry, and a temporary file of an interrupted write.
    orphan = rig.plant_blob(b"a blob of an entry that was never published")
    temporary = orphan.parent / ".tmp-interrupted"
    temporary.write_bytes(b"half a blob")
    os.utime(temporary, (time.time() - 7200, time.time() - 7200))

    report = rig.verify()
    assert report.returncode == 0, f"leftovers made kiln cache verify fail:\n{report.stdout}"
    assert f"leftover: blob {orphan.parent.name}{orphan.name[:14]} belongs to no entry" in report.stdout
    assert "is left over from an interrupted write" in report.stdout
    assert "0 problems, 2 leftovers" in report.stdout

    repaired = rig.verify("--repair")
    assert repaired.returncode == 0 and not orphan.exists() and not temporary.exists()
    assert "0 problems, 0 leftovers" in rig.verify().stdout


def test_a_missing_blob_is_still_a_problem(rig):
    module = rig.write("kernels.py")
    rig.build(module)
    blob_starting_with(rig, b"\x7fELF").unlink()
    report = rig.verify()
    assert report.returncode == 1, report.stdout
    assert "is missing" in report.stdout
