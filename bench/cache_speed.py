"""The specialization cache: warm rebuild against cold, one-kernel edits, lookups.

Goals (issue 5): a warm rebuild of a 20-kernel module for the default
architecture list takes under 5% of the cold build and under 150 ms; a
rebuild after editing one kernel recompiles only that kernel's
specializations; a cache lookup takes under 1 ms.

    python3 bench/cache_speed.py [--kiln build/driver/kiln] [--repeats 5] [--arch LIST]

Every measurement is a fresh `kiln build MODULE --emit fatbin -o TMP -v`
process (wall time), into a cache folder of its own:

* cold: an empty cache (median of --repeats, each with a new cache);
* warm: the same build again, every entry a hit;
* edit one: one kernel's body changed; the -v report must show misses for
  that kernel only;
* --no-cache: the cold build without the cache, to show what the cache's
  writes cost.

Lookup latency is bounded from above by the warm build's wall time divided
by its number of lookups (the front end, process start and output writes
included), and measured directly as the difference between a warm build
and a --no-cache build that stops after the front end (--emit typed),
divided by the lookups.
"""

import argparse
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"^cache .*: (\d+) hits, (\d+) misses$", re.M)
NOTE = re.compile(r"^  (hit |miss) (\S+) (\S+) kernel '(\w+)'", re.M)


def module_source(kernels=20, edited=None):
    lines = ["from numba import cuda, float32, int32, void", "", "SCALE = 3", ""]
    for k in range(kernels):
        bump = " + 1" if k == edited else ""
        lines += [
            "",
            "@cuda.jit(void(float32[::1], float32[::1], int32))",
            f"def kernel{k}(out, x, n):",
            "    i = cuda.grid(1)",
            "    if i < n:",
            f"        v = x[i] * {k + 1}.0{bump}",
            f"        for j in range({k % 4 + 1}):",
            "            v = v * 0.5 + SCALE",
            "        out[i] = v",
            "",
        ]
    return "\n".join(lines)


def run(kiln, args, env):
    began = time.perf_counter()
    result = subprocess.run([kiln, *map(str, args)], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - began
    if result.returncode != 0:
        sys.exit(f"kiln failed: {result.stderr}")
    return elapsed, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=str(REPO / "build" / "driver" / "kiln"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--arch", default=None, help="default: Kiln's default list")
    options = parser.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="kiln-cache-bench-"))
    module = work / "kernels.py"
    module.write_text(module_source())
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_CACHE")}
    env.pop("CUDAARCHS", None)
    arch = ["--arch", options.arch] if options.arch else []

    def build(cache, *extra, out="out"):
        target = work / out
        shutil.rmtree(target, ignore_errors=True)
        return run(options.kiln, ["build", module, "--emit", "fatbin", *arch, "-o", target,
                                  "-v", "--cache-dir", cache, *extra], env)

    cold, warm, uncached, typed = [], [], [], []
    lookups = 0
    for repeat in range(options.repeats):
        cache = work / f"cache{repeat}"
        t, _ = build(cache)
        cold.append(t)
        t, result = build(cache)
        warm.append(t)
        hits, misses = map(int, SUMMARY.search(result.stderr).groups())
        assert misses == 0, result.stderr
        lookups = hits
        t, _ = build(cache, "--no-cache")
        uncached.append(t)
        t, _ = run(options.kiln, ["build", module, "--emit", "typed", "-o", work / "typed"], env)
        typed.append(t)

    # Edit one kernel: only its specializations miss.
    cache = work / "cache0"
    module.write_text(module_source(edited=7))
    t_edit, result = build(cache)
    missed = {m[4] for m in NOTE.finditer(result.stderr) if m[1] == "miss"}
    hits, misses = map(int, SUMMARY.search(result.stderr).groups())

    med = statistics.median
    print(f"module: 20 kernels, one specialization each; arch: {options.arch or 'default'}; "
          f"repeats: {options.repeats}")
    print(f"cold build (empty cache)     {med(cold) * 1000:8.0f} ms")
    print(f"cold build, --no-cache       {med(uncached) * 1000:8.0f} ms")
    print(f"warm rebuild (all hits)      {med(warm) * 1000:8.1f} ms  "
          f"= {med(warm) / med(cold) * 100:.1f}% of cold; {lookups} lookups")
    print(f"front end only (--emit typed){med(typed) * 1000:8.1f} ms")
    print(f"edit one kernel              {t_edit * 1000:8.0f} ms  "
          f"({misses} misses, {hits} hits; recompiled: {', '.join(sorted(missed))})")
    print(f"lookup, upper bound          {med(warm) / lookups * 1000:8.3f} ms  (warm / lookups)")
    print(f"lookup, net of the front end {(med(warm) - med(typed)) / lookups * 1000:8.3f} ms  "
          "((warm - typed) / lookups)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
