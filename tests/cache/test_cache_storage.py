"""How much the specialization cache keeps on disk: the size limit kept with
the cache, prune and clear returning the index's space, a limit smaller
than one build, and fat binaries that do not store their images again.

Real `kiln` processes, real files; nothing is mocked.
"""

import contextlib
import sqlite3

from .conftest import ENTRIES, MODULE, WARM_HITS, outputs

LIMIT_WARNING = "is smaller than this build's"


def variant(n):
    return MODULE.replace("SCALE = 3", f"SCALE = {100 + n}")


def module_bytes(rig, tmp_path, module):
    """What one build of `module` stores, measured in a cache of its own."""
    saved = rig.env["KILN_CACHE_DIR"]
    rig.env["KILN_CACHE_DIR"] = str(tmp_path / "measure")
    try:
        rig.build(module)
        return rig.stats()["bytes"]
    finally:
        rig.env["KILN_CACHE_DIR"] = saved


def test_a_build_size_limit_is_kept_with_the_cache(rig):
    module = rig.write("kernels.py")
    rig.build(module, "--max-size", "3M")
    stats = rig.stats()
    assert stats["max_size"] == 3 << 20, f"stats does not show the limit the build set: {stats}"
    assert stats["max_size_source"] == "stored", stats
    # The environment overrides the stored limit, the flag overrides both.
    env = dict(rig.env, KILN_CACHE_MAX_SIZE="5M")
    result = rig.run("cache", "stats", "--json", env=env, check=True)
    assert '"max_size": 5242880' in result.stdout, result.stdout
    # A build's flag overrides the environment, and is kept.
    rig.build(module, "--max-size", "7M", env=env)
    assert rig.stats()["max_size"] == 7 << 20, "a build's --max-size was not kept"
    result = rig.run("cache", "stats", "--json", env=env, check=True)
    assert '"max_size": 5242880' in result.stdout, "the environment no longer overrides"

def test_kiln_cache_limit_sets_the_limit_prune_and_builds_use(rig, tmp_path):
    modules = [rig.write(f"m{n}.py", variant(n)) for n in range(3)]
    one = module_bytes(rig, tmp_path, modules[0])
    for module in modules:
        rig.build(module)
    limit = int(one * 1.5)
    result = rig.run("cache", "limit", str(limit), check=True)
    assert "limit" in result.stdout, result.stdout
    shown = rig.run("cache", "limit", check=True).stdout
    assert "stored" in shown, f"`kiln cache limit` does not say where its limit comes from: {shown}"
    # prune without --max-size prunes to the stored limit, not to 2G.
    rig.run("cache", "prune", check=True)
    assert rig.stats()["bytes"] <= limit, "prune ignored the stored limit"
    assert rig.stats()["max_size"] == limit


def test_a_bad_stored_limit_command_is_an_error_naming_it(rig):
    result = rig.run("cache", "limit", "lots")
    assert result.returncode == 1, result.stdout
    assert "lots" in result.stderr and "Traceback" not in result.stderr, result.stderr


def grow_index(rig, rows):
    """Adds `rows` entries without blobs to the index, as a cache that many
    builds filled has, and checkpoints so that the file holds them."""
    with contextlib.closing(sqlite3.connect(rig.cache / "index.sqlite")) as db:
        db.execute("PRAGMA busy_timeout = 20000")
        with db:
            db.executemany(
                "INSERT INTO entries(key, meta, kind, target, name, size, created, last_used) "
                "VALUES (?, ?, 'ptx', 'sm_80', 'filler', 100, 1, 1)",
                ((f"{n:064x}", f"{n + 1 << 128:064x}") for n in range(rows)))
            db.executemany("INSERT INTO entry_blobs(key, digest) VALUES (?, ?)",
                           ((f"{n:064x}", f"{n + 1 << 128:064x}") for n in range(rows)))
            db.executemany("INSERT INTO blobs(digest, size) VALUES (?, 100)",
                           ((f"{n + 1 << 128:064x}",) for n in range(rows)))
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def index_size(rig):
    return sum((rig.cache / name).stat().st_size
               for name in ("index.sqlite", "index.sqlite-wal")
               if (rig.cache / name).exists())


def test_prune_returns_the_index_space_it_frees(rig):
    rig.build(rig.write("kernels.py"))
    grow_index(rig, 20000)
    grown = index_size(rig)
    rig.run("cache", "prune", "--older-than", "1d", check=True)
    pruned = index_size(rig)
    assert pruned < grown / 4, f"prune left the index at {pruned} bytes (was {grown})"
    assert rig.verify().returncode == 0


def test_prune_shrinks_an_index_made_without_incremental_vacuum(rig):
    rig.build(rig.write("kernels.py"))
    with contextlib.closing(sqlite3.connect(rig.cache / "index.sqlite")) as db:
        db.execute("PRAGMA auto_vacuum = NONE")
        db.execute("VACUUM")
        assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    grow_index(rig, 20000)
    grown = index_size(rig)
    rig.run("cache", "prune", "--older-than", "1d", check=True)
    assert index_size(rig) < grown / 4, "prune did not shrink an older index"
    with contextlib.closing(sqlite3.connect(rig.cache / "index.sqlite")) as db:
        assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2, \
            "prune did not switch the index to incremental vacuum"


def test_clear_returns_the_index_space(rig):
    rig.build(rig.write("kernels.py"))
    grow_index(rig, 20000)
    grown = index_size(rig)
    rig.run("cache", "clear", check=True)
    assert index_size(rig) < grown / 4, "clear left the index its size"


def test_a_limit_smaller_than_a_build_warns_once_and_keeps_what_fits(rig, tmp_path):
    module = rig.write("kernels.py")
    one = module_bytes(rig, tmp_path, module)
    limit = one // 2
    result, _, _, _, first = rig.build(module, "--max-size", str(limit))
    assert result.stderr.count(LIMIT_WARNING) == 1, result.stderr
    assert "keeping the most recently used that fit" in result.stderr, result.stderr
    stats = rig.stats()
    assert 0 < stats["bytes"] <= limit, f"the cache keeps {stats['bytes']} of limit {limit}"
    assert stats["entries"] > 0, "a too-small limit emptied the cache"
    # The next build (the limit is kept) reuses what was kept.
    result, hits, misses, _, second = rig.build(module)
    assert hits > 0, f"a rebuild under a too-small limit reused nothing:\n{result.stderr}"
    assert result.stderr.count(LIMIT_WARNING) <= 1, result.stderr
    assert outputs(second) == outputs(first)
    assert rig.stats()["bytes"] <= limit
    assert rig.verify().returncode == 0


def test_a_limit_evicts_other_builds_entries_before_this_builds(rig, tmp_path):
    old, new = rig.write("old.py", variant(1)), rig.write("new.py", variant(2))
    one = module_bytes(rig, tmp_path, new)
    rig.build(old)
    result, _, _, _, _ = rig.build(new, "--max-size", str(int(one * 1.3)))
    assert LIMIT_WARNING not in result.stderr, result.stderr
    names = [entry["name"].split(".")[0] for entry in rig.entries()]
    assert names.count("new") == ENTRIES, f"the build's own entries were evicted: {names}"
    assert names.count("old") < ENTRIES, names


FATBIN_MAGIC = bytes.fromhex("50ed55ba")  # 0xBA55ED50, little-endian


def by_kind(rig):
    sizes = {}
    for entry in rig.entries():
        sizes.setdefault(entry["kind"], {})[entry["name"]] = entry["bytes"]
    return sizes


def test_a_fat_binary_entry_does_not_store_its_cubins_again(rig, tmp_path):
    module = rig.write("kernels.py")
    _, _, _, _, out = rig.build(module)
    sizes = by_kind(rig)
    for name, fatbin in sizes["fatbin"].items():
        cubin = sizes["cubin"][name]
        assert fatbin < cubin, (f"the fat binary entry of {name} takes {fatbin} bytes, more than "
                                f"its cubin ({cubin}): it stores the cubin again")
        ptx = sizes["ptx"][name]
        assert fatbin < ptx, (f"the fat binary entry of {name} takes {fatbin} bytes, more than "
                              f"its PTX ({ptx}): it stores the PTX again")
    # The fat binaries put together are those of an uncached build.
    reference = rig.root / "reference"
    rig.run(*rig.build_args(module, reference, "--no-cache"), check=True)
    assert outputs(out) == outputs(reference)
    _, hits, misses, _, again = rig.build(module)
    assert misses == 0 and hits == WARM_HITS
    assert outputs(again) == outputs(reference), "a fat binary put together from the cache differs"
    assert rig.verify().returncode == 0


def test_a_damaged_part_of_a_fat_binary_entry_is_a_miss_that_recompiles(rig):
    module = rig.write("kernels.py")
    _, _, _, _, first = rig.build(module)
    pieces = [b for b in rig.blobs() if b.read_bytes().startswith(FATBIN_MAGIC)]
    assert pieces, "no blob holds the start of a fat binary"
    for piece in pieces:
        data = bytearray(piece.read_bytes())
        data[len(data) // 2] ^= 0x40
        piece.write_bytes(bytes(data))
    result, _, misses, notes, out = rig.build(module)
    assert "damaged" in result.stderr, result.stderr
    assert ("miss", "fatbin", "-") in [n[:3] for n in notes], notes
    assert outputs(out) == outputs(first), "a damaged fat binary part changed the output"
    _, hits, misses, _, again = rig.build(module)
    assert misses == 0 and outputs(again) == outputs(first)
    assert rig.verify().returncode == 0
