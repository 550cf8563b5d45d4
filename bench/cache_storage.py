"""What the specialization cache keeps on disk: bytes per module build, and
the index file's size after prune.

    python3 bench/cache_storage.py [--kiln build/driver/kiln] [--against OTHER_KILN]
                                   [--kernels 20] [--arch LIST] [--rows 20000] [--json FILE]

For each kiln (--kiln, and --against to compare with another build of it):

* bytes: one `kiln build MODULE --emit fatbin` of bench/cache_speed.py's
  generated module into an empty cache; what `kiln cache stats` counts (every
  blob once), and per entry kind what `kiln cache list` says each kind's
  entries take; against it, the fat binaries the build wrote (what the
  fatbin entries would take stored whole, as Kiln stored them before it
  kept them in parts);
* index: the same cache with --rows more entries (rows without blobs, as a
  cache that many builds filled holds) written into its index, then
  `kiln cache prune --older-than 1d`, which drops them; the index file
  (with its write-ahead log) before and after.

Sizes are of files, not times: one run says it all.
"""

import argparse
import contextlib
import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from cache_speed import module_source  # noqa: E402


def run(kiln, args, env):
    result = subprocess.run([kiln, *args], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"{kiln} {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def index_bytes(cache):
    return sum((cache / name).stat().st_size for name in ("index.sqlite", "index.sqlite-wal")
               if (cache / name).exists())


def grow_index(cache, rows):
    with contextlib.closing(sqlite3.connect(cache / "index.sqlite")) as db:
        with db:
            keys = [(f"{n:064x}", f"{(n + 1) << 128:064x}") for n in range(rows)]
            db.executemany(
                "INSERT INTO entries(key, meta, kind, target, name, size, created, last_used) "
                "VALUES (?, ?, 'ptx', 'sm_80', 'filler', 100, 1, 1)", keys)
            db.executemany("INSERT INTO entry_blobs(key, digest) VALUES (?, ?)", keys)
            db.executemany("INSERT INTO blobs(digest, size) VALUES (?, 100)",
                           [(meta,) for _, meta in keys])
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def measure(kiln, module, arch, rows, work):
    cache = work / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    env["KILN_CACHE_DIR"] = str(cache)
    args = ["build", str(module), "--emit", "fatbin", "-o", str(work / "out")]
    if arch:
        args += ["--arch", arch]
    run(kiln, args, env)
    whole = sum(path.stat().st_size for path in (work / "out").glob("*.fatbin"))
    stats = json.loads(run(kiln, ["cache", "stats", "--json"], env))
    kinds = {}
    for entry in json.loads(run(kiln, ["cache", "list", "--json"], env)):
        count, size = kinds.get(entry["kind"], (0, 0))
        kinds[entry["kind"]] = (count + 1, size + entry["bytes"])
    grow_index(cache, rows)
    grown = index_bytes(cache)
    run(kiln, ["cache", "prune", "--older-than", "1d"], env)
    return {"bytes": stats["bytes"], "entries": stats["entries"], "kinds": kinds,
            "fatbin_whole": whole,
            "index_grown": grown, "index_pruned": index_bytes(cache)}


def kib(n):
    return f"{n / 1024:.1f} KiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=str(REPO / "build" / "driver" / "kiln"))
    parser.add_argument("--against", help="another kiln to compare with")
    parser.add_argument("--kernels", type=int, default=20)
    parser.add_argument("--arch")
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--json", help="write the results to this file")
    options = parser.parse_args()
    kilns = [("this build", options.kiln)]
    if options.against:
        kilns.insert(0, ("against", options.against))
    results = []
    with tempfile.TemporaryDirectory() as temporary:
        root = pathlib.Path(temporary)
        module = root / "kernels.py"
        module.write_text(module_source(options.kernels))
        for number, (label, kiln) in enumerate(kilns):
            work = root / f"run{number}"
            work.mkdir()
            results.append((label, kiln, measure(kiln, module, options.arch, options.rows, work)))
    kinds = sorted({kind for _, _, result in results for kind in result["kinds"]})
    print(f"A generated module of {options.kernels} kernels, "
          f"{'--arch ' + options.arch if options.arch else 'the default architecture list'}, "
          f"one `kiln build --emit fatbin` into an empty cache; then {options.rows} entries "
          "without blobs written into its index and dropped by "
          "`kiln cache prune --older-than 1d`.\n")
    print("| kiln | cache bytes (each blob once) | entries | "
          + " | ".join(f"{kind} entries' bytes" for kind in kinds)
          + " | index with the extra rows | index after prune |")
    print("| --- | ---: | ---: | " + " | ".join("---:" for _ in kinds) + " | ---: | ---: |")
    for label, kiln, result in results:
        cells = [kib(result["kinds"].get(kind, (0, 0))[1]) for kind in kinds]
        print(f"| {label} (`{kiln}`) | {kib(result['bytes'])} | {result['entries']} | "
              + " | ".join(cells)
              + f" | {kib(result['index_grown'])} | {kib(result['index_pruned'])} |")
    if options.json:
        label, kiln, result = results[-1]
        pathlib.Path(options.json).write_text(json.dumps(
            {"kernels": options.kernels, "arch": options.arch or "default", "rows": options.rows,
             **result}, indent=1))


if __name__ == "__main__":
    main()
