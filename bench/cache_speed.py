"""The specialization cache: warm rebuild against cold, one-kernel edits, moved lines, lookups.

Goals: a warm rebuild of a 20-kernel module for the default
architecture list takes under 5% of the cold build and under 150 ms; a
rebuild after editing one kernel recompiles only that kernel's
specializations; a rebuild after a line is inserted above every kernel
recompiles nothing and costs at most 5% of the cold build; a cache lookup
takes under 1 ms.

    python3 bench/cache_speed.py [--kiln build/driver/kiln] [--repeats 5] [--jobs 1,2] [--kernels 20]
                                 [--arch LIST] [--json FILE]

Every measurement is a fresh `kiln build MODULE --module kernels
--ext-suffix SUFFIX -o TMP -v -j J` process (wall time; what
add_python_kernels() and kiln.setuptools run, host code for the CPU engine
included; SUFFIX is the running Python's EXT_SUFFIX, which the integrations
pass rather than have Kiln ask Python), for each J of --jobs, into a cache
folder of its own:

* cold: an empty cache (median of --repeats, each with a new cache);
* warm: the same build again, every entry a hit;
* edit one: one kernel's body changed; the -v report must show misses for
  that kernel only;
* moved lines: a comment line inserted at the top of the module, above
  every kernel; the -v report must show no miss;
* --no-cache: the cold build without the cache, to show what the cache's
  writes cost.

Lookup latency is bounded from above by the warm build's wall time divided
by its number of lookups (the front end, process start and output writes
included), and measured directly as the difference between a warm build
and a --no-cache build that stops after the front end (--emit typed),
divided by the lookups, and as the build times each hit's step (`--json`:
key, index lookup, blob reads and checks).
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"^cache .*: (\d+) local hits, (\d+) remote hits, (\d+) compiled$", re.M)


def hits_and_misses(stderr):
    """(local and remote hits, compiled) from a -v build's summary line."""
    local, remote, compiled = map(int, SUMMARY.search(stderr).groups())
    return local + remote, compiled
NOTE = re.compile(r"^  (local hit|remote hit|compiled) +(\S+) (\S+) kernel '(\w+)'", re.M)


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
    parser.add_argument("--warmups", type=int, default=1, help="untimed cold + warm builds first")
    parser.add_argument("--jobs", default="1,2", help="comma-separated -j values to build with")
    parser.add_argument("--kernels", type=int, default=20, help="kernels in the generated module")
    parser.add_argument("--edit", type=int, default=7, help="the kernel whose body the edit changes")
    parser.add_argument("--arch", default=None, help="default: Kiln's default list")
    parser.add_argument("--json", help="also write the raw measurements here")
    options = parser.parse_args()
    edited = min(options.edit, options.kernels - 1)

    work = pathlib.Path(tempfile.mkdtemp(prefix="kiln-cache-bench-"))
    module = work / "kernels.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_CACHE")}
    env.pop("CUDAARCHS", None)
    arch = ["--arch", options.arch] if options.arch else []
    jobs = [int(j) for j in options.jobs.split(",")]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")

    def build(cache, *extra, out="out"):
        target = work / out
        shutil.rmtree(target, ignore_errors=True)
        return run(options.kiln, ["build", module, "--module", "kernels", "--ext-suffix", suffix, *arch,
                                  "-o", target, "-v", "--cache-dir", cache, *extra], env)

    # Per -j: cold (empty cache), warm (all hits), edit (one kernel changed,
    # against the warm cache of the unedited module), each repeat with a new cache.
    runs = {j: {"cold": [], "warm": [], "edit": [], "moved": [], "uncached": [], "lookup": []} for j in jobs}
    typed = []
    lookups = 0
    edit_report = None
    for repeat in range(-options.warmups, options.repeats):
        for j in jobs:
            cache = work / f"cache{repeat}-j{j}"
            module.write_text(module_source(options.kernels))
            cold, _ = build(cache, "-j", j)
            warm, result = build(cache, "-j", j, "--json")
            hits, misses = hits_and_misses(result.stderr)
            assert misses == 0, result.stderr
            lookups = hits
            report = json.loads(result.stdout)
            hit_times = [step["microseconds"] / 1e6 for item in report["kernels"] + report["images"]
                         for step in item["steps"] if step["cache"] == "hit"]
            uncached, _ = build(cache, "--no-cache", "-j", j)
            module.write_text("# a line above every kernel\n" + module_source(options.kernels))
            moved, result = build(cache, "-j", j)
            hits, misses = hits_and_misses(result.stderr)
            assert misses == 0, f"moving every kernel one line down recompiled:\n{result.stderr}"
            module.write_text(module_source(options.kernels, edited=edited))
            edit, result = build(cache, "-j", j)
            missed = {m[4] for m in NOTE.finditer(result.stderr) if m[1] == "compiled"}
            hits, misses = hits_and_misses(result.stderr)
            edit_report = {"hits": hits, "misses": misses, "recompiled": sorted(missed)}
            shutil.rmtree(cache, ignore_errors=True)
            if repeat < 0:
                continue
            for key, value in (("cold", cold), ("warm", warm), ("edit", edit), ("moved", moved),
                               ("uncached", uncached)):
                runs[j][key].append(value)
            runs[j]["lookup"].extend(hit_times)
        if repeat >= 0:
            module.write_text(module_source(options.kernels))
            t, _ = run(options.kiln, ["build", module, "--emit", "typed", "-o", work / "typed"], env)
            typed.append(t)

    med = statistics.median
    print(f"module: {options.kernels} kernels, one specialization each; arch: {options.arch or 'default'}; "
          f"repeats: {options.repeats} after {options.warmups} warm-up(s)")
    for j in jobs:
        r = runs[j]
        print(f"-j{j} cold build (empty cache)     {med(r['cold']) * 1000:8.0f} ms")
        print(f"-j{j} cold build, --no-cache       {med(r['uncached']) * 1000:8.0f} ms")
        print(f"-j{j} warm rebuild (all hits)      {med(r['warm']) * 1000:8.1f} ms  "
              f"= {med(r['warm']) / med(r['cold']) * 100:.1f}% of cold; {lookups} lookups")
        print(f"-j{j} edit one kernel              {med(r['edit']) * 1000:8.0f} ms")
        print(f"-j{j} a line inserted on top       {med(r['moved']) * 1000:8.1f} ms  "
              f"= {med(r['moved']) / med(r['cold']) * 100:.1f}% of cold")
    print(f"front end only (--emit typed)    {med(typed) * 1000:8.1f} ms")
    print(f"edit: kernel{edited} changed: {edit_report['misses']} misses, {edit_report['hits']} hits; "
          f"recompiled: {', '.join(edit_report['recompiled'])}")
    warm_all = [t for j in jobs for t in runs[j]["warm"]]
    print(f"lookup, upper bound              {med(warm_all) / lookups * 1000:8.3f} ms  (warm / lookups)")
    print(f"lookup, net of the front end     {(med(warm_all) - med(typed)) / lookups * 1000:8.3f} ms  "
          "((warm - typed) / lookups)")
    lookup_all = [t for j in jobs for t in runs[j]["lookup"]]
    print(f"lookup, as the build times it    {med(lookup_all) * 1000:8.3f} ms  "
          f"(median of every warm hit's step; slowest {max(lookup_all) * 1000:.3f} ms)")
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps({
            "kernels": options.kernels, "arch": options.arch or "default", "repeats": options.repeats,
            "warmups": options.warmups, "jobs": jobs, "lookups": lookups, "edited": f"kernel{edited}",
            "edit_report": edit_report, "typed": typed, "runs": {str(j): r for j, r in runs.items()}}, indent=1))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
