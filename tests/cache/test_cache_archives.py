"""`kiln cache export` / `import`, and malicious archives."""

import bz2
import contextlib
import json
import sqlite3
import tarfile

from .conftest import ENTRIES, WARM_HITS, assert_rejected, blob_digest, write_tar


def test_export_then_import_gives_hits_elsewhere(rig, tmp_path):
    module = rig.write("kernels.py")
    rig.build(module)
    rig.make_key("ci")
    archive = tmp_path / "cache.tar.gz"
    result = rig.run("cache", "export", archive, check=True)
    assert f"exported {ENTRIES} entries" in result.stdout
    rig.env["KILN_CACHE_DIR"] = str(tmp_path / "other")
    result = rig.run("cache", "import", archive, check=True)
    assert f"imported {ENTRIES} entries" in result.stdout
    _, hits, misses, _, _ = rig.build(module)
    assert misses == 0 and hits == WARM_HITS
    assert rig.verify().returncode == 0


def test_every_compression_export_writes_imports(rig, tmp_path):
    rig.build(rig.write("kernels.py"))
    rig.make_key("ci")
    for name in ("cache.tar", "cache.tar.zst", "cache.tar.xz", "cache.tgz"):
        rig.env["KILN_CACHE_DIR"] = str(rig.cache)
        rig.run("cache", "export", tmp_path / name, check=True)
        rig.env["KILN_CACHE_DIR"] = str(tmp_path / f"imported-{name}")
        result = rig.run("cache", "import", tmp_path / name, check=True)
        assert f"imported {ENTRIES} entries" in result.stdout, (name, result.stdout)


def test_a_compression_export_never_writes_is_refused_by_name(rig, exported, tmp_path):
    archive = tmp_path / "cache.tar.bz2"
    archive.write_bytes(bz2.compress(write_tar(tmp_path / "plain.tar", exported).read_bytes()))
    result = rig.run("cache", "import", archive)
    assert result.returncode == 1, result.stdout
    assert f"cannot read '{archive}'" in result.stderr, result.stderr
    assert "zstd, gzip or xz" in result.stderr, result.stderr
    assert not rig.cache.exists(), "a refused import created the cache folder"


def info(name, kind, **fields):
    result = tarfile.TarInfo(name)
    result.type = kind
    for key, value in fields.items():
        setattr(result, key, value)
    return result


def test_a_good_archive_imports(rig, exported, tmp_path):
    result = rig.run("cache", "import", write_tar(tmp_path / "a.tar", exported), check=True)
    assert f"imported {ENTRIES} entries" in result.stdout


def test_path_traversal_is_rejected(rig, exported, tmp_path):
    members = dict(exported)
    members["objects/../../evil"] = b"x"
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "'..'", tmp_path / "evil")


def test_absolute_paths_are_rejected(rig, exported, tmp_path):
    members = dict(exported)
    members["/tmp/kiln-evil-file"] = b"x"
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "absolute")


def test_symlinks_are_rejected(rig, exported, tmp_path):
    name = next(iter(exported))
    link = info(name.replace(name[-4:], "beef"), tarfile.SYMTYPE, linkname="/etc/passwd")
    assert_rejected(rig, write_tar(tmp_path / "a.tar", exported, [(link, None)]), "symbolic")


def test_hardlinks_are_rejected(rig, exported, tmp_path):
    name = next(iter(exported))
    link = info("objects/aa/" + "a" * 62, tarfile.LNKTYPE, linkname=name)
    assert_rejected(rig, write_tar(tmp_path / "a.tar", exported, [(link, None)]), "hard link")


def test_device_nodes_are_rejected(rig, exported, tmp_path):
    device = info("objects/aa/" + "b" * 62, tarfile.CHRTYPE, devmajor=1, devminor=3)
    assert_rejected(rig, write_tar(tmp_path / "a.tar", exported, [(device, None)]), "device")


def test_wrong_digests_are_rejected(rig, exported, tmp_path):
    members = dict(exported)
    name = next(n for n, d in members.items() if d.startswith(b"\x7fELF"))
    data = bytearray(members[name])
    data[100] ^= 1
    members[name] = bytes(data)
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "does not match its digest")


def test_duplicate_entries_are_rejected(rig, exported, tmp_path):
    name, data = next(iter(exported.items()))
    duplicate = info(name, tarfile.REGTYPE, size=len(data))
    assert_rejected(rig, write_tar(tmp_path / "a.tar", exported, [(duplicate, data)]),
                    "comes twice")


def test_decompression_bombs_are_rejected(rig, exported, tmp_path):
    zeros = bytes(96 << 20)
    name = "objects/00/" + "0" * 62  # the digest never gets checked: the size stops it first
    archive = write_tar(tmp_path / "bomb.tar.gz", {name: zeros}, compress=True)
    assert archive.stat().st_size < 1 << 20
    assert_rejected(rig, archive, "decompression bomb")


def test_members_of_no_entry_are_rejected(rig, exported, tmp_path):
    # Without the signature check, which would refuse the archive first (its
    # manifest lists the metadata left out).
    members = {n: d for n, d in exported.items() if not d.startswith(b"kiln-cache-entry")}
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "belongs to no entry",
                    extra=["--insecure-skip-signature"])


def test_a_blob_an_entry_lists_many_times_counts_once(rig, exported, tmp_path):
    metadata_name, metadata = next(
        (name, data) for name, data in exported.items() if data.startswith(b"kiln-cache-entry 1\n"))
    entry = json.loads(metadata[len(b"kiln-cache-entry 1\n"):])
    blob = entry["blobs"][0]
    entry["blobs"] = [blob] * 2000
    forged = b"kiln-cache-entry 1\n" + json.dumps(entry).encode() + b"\n"
    digest = blob_digest(forged)
    members = {name: data for name, data in exported.items() if name != metadata_name}
    members[f"objects/{digest[:2]}/{digest[2:]}"] = forged
    # Forged, so outside the signed manifest: only an import that skips the
    # signature takes it, which is what this accounting is about.
    result = rig.run("cache", "import", write_tar(tmp_path / "many.tar", members),
                     "--insecure-skip-signature", check=True)
    assert f"imported {ENTRIES} entries" in result.stdout, result.stdout
    # The import stores the metadata as Kiln writes it: measure what is on disk.
    cache = tmp_path / "target"
    with contextlib.closing(sqlite3.connect(cache / "index.sqlite")) as db:
        (meta,) = db.execute("SELECT meta FROM entries WHERE key = ?", (entry["key"],)).fetchone()
    meta_size = rig.blob(meta).size
    [row] = [e for e in rig.entries() if e["key"] == entry["key"]]
    assert row["bytes"] == meta_size + blob["size"], (
        f"the entry's size counts its blob {(row['bytes'] - meta_size) // max(blob['size'], 1)} times")
    on_disk = sum(stored.size for stored in rig.blobs())
    stats = rig.stats()
    assert stats["bytes"] == on_disk, stats
    assert sum(t["bytes"] for t in stats["targets"].values()) == on_disk, stats
