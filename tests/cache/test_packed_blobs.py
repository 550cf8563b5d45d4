"""Small blobs packed in one SQLite file (objects/packed/blobs.sqlite), large ones
a file each: what is where, and that packing keeps the cache's guarantees
under killed builds, concurrent builds and damage.

Real `kiln` processes, real files, real signals; nothing is mocked.
"""

import json
import os
import random
import signal
import sqlite3
import subprocess
import time

import pytest

from .conftest import (ENTRIES, MODULE, PACKED_BLOB_LIMIT, WARM_HITS, blob_digest, outputs,
                       packed_blobs, packed_database, write_tar)

MAGIC = b"kiln-cache-entry 1\n"


def variant(n, kernels=1):
    """MODULE with its constant changed, and `kernels` more kernels."""
    extra = "".join(f'''

@cuda.jit(void(float32[::1]))
def extra{k}(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = out[i] * {k + 2} + SCALE
''' for k in range(kernels))
    return MODULE.replace("SCALE = 3", f"SCALE = {100 + n}") + extra


def start(rig, module, out):
    return subprocess.Popen(rig.command(*rig.build_args(module, out)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=rig.env)


def index_rows(rig, sql):
    db = sqlite3.connect(rig.cache / "index.sqlite")
    try:
        db.execute("PRAGMA busy_timeout = 20000")
        return db.execute(sql).fetchall()
    finally:
        db.close()


def checkpoint_packed(rig):
    """Moves the packed blobs' write-ahead log into the database file, so
    that damage to the file is damage to the blobs."""
    with packed_blobs(rig.cache) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def problems(report):
    return [line for line in report.stdout.splitlines() if line.startswith("problem:")]


def test_a_builds_small_blobs_are_packed_in_one_file(rig):
    module = rig.write("kernels.py")
    rig.build(module)
    assert rig.blob_files() == [], (
        f"blobs of at most {PACKED_BLOB_LIMIT} bytes were written as files: {rig.blob_files()}")
    listed = {digest for (digest,) in index_rows(rig, "SELECT digest FROM blobs")}
    assert set(rig.packed_digests()) == listed, "the packed blobs are not the blobs the index lists"
    metadata = [b for b in rig.blobs() if b.read_bytes().startswith(MAGIC)]
    assert len(metadata) == ENTRIES, "every entry's metadata blob is packed"
    _, hits, misses, _, _ = rig.build(module)
    assert (hits, misses) == (WARM_HITS, 0)


def test_a_blob_over_the_limit_is_a_file_and_travels_through_export(rig, exported, tmp_path):
    """An entry whose blob is larger than the packing limit, imported: its
    blob becomes a file, its metadata is packed, and both export again."""
    large = os.urandom(PACKED_BLOB_LIMIT + 4096)
    key = "ab" * 32
    entry = {"key": key, "kind": "ptx", "target": "sm_80", "name": "kernels.large$0",
             "created": 1, "info": {"members": ""},
             "blobs": [{"role": "code", "digest": blob_digest(large), "size": len(large)}]}
    metadata = MAGIC + json.dumps(entry).encode() + b"\n"
    members = dict(exported)
    for data in (large, metadata):
        digest = blob_digest(data)
        members[f"objects/{digest[:2]}/{digest[2:]}"] = data
    result = rig.run("cache", "import", write_tar(tmp_path / "large.tar", members),
                     "--insecure-skip-signature", check=True)
    assert f"imported {ENTRIES + 1} entries" in result.stdout, result.stdout
    files = {p.parent.name + p.name for p in rig.blob_files()}
    assert files == {blob_digest(large)}, f"only the large blob should be a file: {files}"
    packed = {blob.digest: blob for blob in rig.blobs() if blob.path is None}
    (meta,) = index_rows(rig, f"SELECT meta FROM entries WHERE key = '{key}'")[0]
    assert meta in packed, "the large entry's metadata is not packed"
    assert rig.verify().returncode == 0

    archive = tmp_path / "again.tar"
    rig.run("cache", "export", archive, "--unsigned", check=True)
    rig.cache = tmp_path / "third"
    rig.env["KILN_CACHE_DIR"] = str(rig.cache)
    result = rig.run("cache", "import", archive, "--insecure-skip-signature", check=True)
    assert f"imported {ENTRIES + 1} entries" in result.stdout, result.stdout
    assert rig.blob(blob_digest(large)).read_bytes() == large


def wait_for_packed_writes(path, proc, deadline):
    """Waits until the packed blobs' log changes (a build writing blobs),
    the build ends, or the deadline passes."""
    log = path.with_name(path.name + "-wal")

    def state():
        try:
            info = log.stat()
            return info.st_size, info.st_mtime_ns
        except FileNotFoundError:
            return None

    before = state()
    while proc.poll() is None and time.monotonic() < deadline:
        if state() != before:
            return
        time.sleep(0.0002)


def test_a_killed_build_loses_nothing_it_committed_and_corrupts_nothing(rig):
    """SIGKILL, at random moments and the moment a build writes packed
    blobs: every entry the index held after a kill is intact and still held
    at the end; no read ever finds a damaged blob."""
    rng = random.Random(11)
    reference = {}
    modules = []
    for n in range(10):
        module = rig.write(f"killed{n}.py", variant(n, kernels=4))
        modules.append(module)
        reference[module] = outputs(rig.build(module, "--no-cache")[4])
    # The cache exists: the first write of a build is its blobs.
    rig.build(rig.write("kernels.py"))
    committed = set()
    kills_while_writing = 0
    for n, module in enumerate(modules):
        began = time.monotonic()
        proc = start(rig, module, rig.root / f"killed-out{n}")
        if n % 2 == 0:
            wait_for_packed_writes(packed_database(rig.cache), proc, began + 60)
            kills_while_writing += proc.poll() is None
        else:
            time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        report = rig.verify()
        assert problems(report) == [], f"a build killed after {time.monotonic() - began:.3f} s " \
                                       f"left a damaged cache:\n{report.stdout}"
        committed |= {entry["key"] for entry in rig.entries()}
    assert kills_while_writing, "no build was killed while it wrote packed blobs"
    for module in modules:
        result, _, _, _, out = rig.build(module)
        assert "warning" not in result.stderr, result.stderr
        assert outputs(out) == reference[module]
    kept = {entry["key"] for entry in rig.entries()}
    assert committed <= kept, f"{len(committed - kept)} committed entries were lost"
    assert rig.stats()["corrupt_reads"] == 0
    assert problems(rig.verify()) == []


def test_builds_clears_and_prunes_at_once_leave_a_consistent_cache(rig):
    modules = [rig.write(f"busy{i}.py", variant(i, kernels=2)) for i in range(8)]
    builds = [start(rig, m, rig.root / f"busy-out{i}") for i, m in enumerate(modules)]
    maintenance = [subprocess.Popen(rig.command("cache", *command), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=rig.env)
                   for command in (["clear"], ["prune", "--max-size", "1"], ["clear"],
                                   ["prune", "--older-than", "0s"])]
    for proc in builds + maintenance:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    for i in range(len(modules)):
        assert len(outputs(rig.root / f"busy-out{i}")) == 1
    report = rig.verify()
    assert report.returncode == 0 and problems(report) == [], report.stdout
    # What is left hits, and what is not is compiled again.
    for module in modules:
        result, _, _, _, _ = rig.build(module)
        assert "warning" not in result.stderr, result.stderr
    assert rig.stats()["corrupt_reads"] == 0


def test_a_damaged_packed_metadata_blob_is_a_miss_that_recompiles(rig):
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    fatbin_meta = next(b for b in rig.blobs()
                       if b.read_bytes().startswith(MAGIC) and b'"kind":"fatbin"' in b.read_bytes())
    assert fatbin_meta.path is None, "the metadata blob is not packed"
    fatbin_meta.write_bytes(fatbin_meta.read_bytes().replace(b'"kind":"fatbin"', b'"kind":"fatbon"'))
    result, _, _, notes, out = rig.build(module)
    assert result.stderr.count("warning") == 1 and "damaged" in result.stderr, result.stderr
    assert ("miss", "fatbin", "-") in [n[:3] for n in notes], notes
    assert outputs(out) == outputs(first)
    assert rig.stats()["corrupt_reads"] == 1
    _, hits, misses, _, _ = rig.build(module)
    assert (hits, misses) == (WARM_HITS, 0)


@pytest.mark.parametrize("damage", ["garbage", "truncate"])
def test_a_damaged_packed_file_is_moved_aside_and_its_entries_recompiled(rig, damage):
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    checkpoint_packed(rig)
    path = packed_database(rig.cache)
    size = path.stat().st_size
    if damage == "garbage":
        path.write_bytes(os.urandom(size))
    else:
        with open(path, "r+b") as f:
            f.truncate(size // 3)
    result, hits, misses, notes, out = rig.build(module)
    assert outputs(out) == outputs(first), "a damaged packed file changed the output"
    assert hits == 0 and misses > 0, result.stderr
    assert result.stderr.count("warning") == 1, result.stderr
    assert "packed blobs" in result.stderr and "moved them to" in result.stderr, result.stderr
    assert list(path.parent.glob("blobs.sqlite.damaged-*")), "the damaged file was not kept aside"
    _, hits, misses, _, again = rig.build(module)
    assert (hits, misses) == (WARM_HITS, 0), "the entries compiled again were not kept"
    assert outputs(again) == outputs(first)
    report = rig.verify()
    assert report.returncode == 0, report.stdout


def test_verify_reports_what_a_damaged_packed_file_held_and_repair_drops_it(rig):
    """verify, like any command, moves a damaged packed file aside when it
    opens the cache; what it held is then missing: problems, which --repair
    drops."""
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    checkpoint_packed(rig)
    path = packed_database(rig.cache)
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 3)
    report = rig.verify()
    assert report.returncode == 1, report.stdout
    assert "packed blobs" in report.stderr and "moved them to" in report.stderr, report.stderr
    assert len(problems(report)) == ENTRIES and "is missing" in report.stdout, report.stdout
    assert list(path.parent.glob("blobs.sqlite.damaged-*"))
    repaired = rig.verify("--repair")
    assert repaired.returncode == 0 and "dropped entry" in repaired.stdout, repaired.stdout
    report = rig.verify()
    assert report.returncode == 0 and problems(report) == [], report.stdout
    result, _, misses, _, out = rig.build(module)
    assert misses > 0 and "warning" not in result.stderr, result.stderr
    assert outputs(out) == outputs(first)


def test_small_blobs_a_cache_kept_as_files_are_still_read(rig):
    """A cache from before packing keeps every blob as a file."""
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    for blob in rig.blobs():
        path = rig.cache / "objects" / blob.digest[:2] / blob.digest[2:]
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(blob.read_bytes())
    for suffix in ("", "-wal", "-shm"):
        packed_database(rig.cache).with_name("blobs.sqlite" + suffix).unlink(missing_ok=True)
    result, hits, misses, _, out = rig.build(module)
    assert (hits, misses) == (WARM_HITS, 0), result.stderr
    assert "warning" not in result.stderr, result.stderr
    assert outputs(out) == outputs(first)
    assert rig.verify().returncode == 0


def test_clear_empties_the_packed_file(rig):
    module = rig.write("kernels.py", variant(0, kernels=6))
    rig.build(module)
    path = packed_database(rig.cache)
    full = path.stat().st_size + path.with_name("blobs.sqlite-wal").stat().st_size
    rig.run("cache", "clear", check=True)
    assert rig.packed_digests() == [] and rig.stats()["entries"] == 0
    emptied = path.stat().st_size + path.with_name("blobs.sqlite-wal").stat().st_size
    assert emptied < full / 2, f"clear left the packed file at {emptied} bytes (was {full})"
