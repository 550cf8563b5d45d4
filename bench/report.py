"""Renders the results bench/run.py collected into docs/benchmarks.md.

One function per figure turns a script's --json output into Markdown
tables; the hand-written explanations are bench/templates/NAME.md, placed
under each figure's heading as they are. Every figure records what Kiln
loses on in `behind`, which the summary and the closing note repeat.
"""

import pathlib
import statistics

TEMPLATES = pathlib.Path(__file__).resolve().parent / "templates"

TITLES = {
    "compile": "1. Cold compile per specialization and architecture: `kiln build` against `numba.cuda.compile_ptx` + ptxas",
    "build": "2. Whole-module build, `-j1` and `-j2`: cold, warm (cache hit), after editing one kernel",
    "scale": "2b. A module of 100 and 500 kernels: `kiln build` against Numba, end to end",
    "startup": "3. From `import` to the first finished launch",
    "firstcall": "3b. First call of a kernel specialized on demand, against Numba's first call",
    "imports": "3c. Import of a built module of 1, 100 and 500 kernels",
    "dispatch": "4. Dispatch overhead per launch, device arrays, without the launch itself",
    "registers": "5. Generated code: registers, spills, shared and constant memory, Kiln against Numba's NVVM",
    "cpu": "6. CPU engine throughput against Numba's simulator and NumPy",
    "checks": "6b. Index checks on the CPU engine: checked against `KILN_CPU_BOUNDSCHECK=0`",
    "polls": "6e. Interrupt polls on the CPU engine: loops that poll against the same loops bounded",
    "launch": "6c. CPU engine launch cost: one block from Python, 1-D against 2-D grids",
    "throughput": "6d. CPU engine throughput against NumPy, `@njit` and `@njit(parallel=True)`; barriers",
    "check": "7. `kiln check` on a 2,000-line module; peak memory of `kiln build`",
    "remote": "8. Remote cache tier: a cold build served by a warm remote; an unreachable or slow remote",
    "storage": "9. Cache storage: bytes one module build keeps, and the index file after prune",
}


# Measured apart from bench/run.py (they need a built wheel, or half an hour
# of numba-cuda's tests): their text and figures are kept as written in
# bench/templates/NAME.md, after the figures run.py measures.
MEASURED_APART = {
    "wheel": "10. The compiler's wheel: its size, and what the shared compiler library costs at start",
    "register_pairs": "11. Registers on numba-cuda's own kernels: Kiln against Numba at sm_80 and sm_90",
}


def template(name):
    path = TEMPLATES / f"{name}.md"
    return path.read_text().strip() + "\n\n" if path.exists() else ""


def table(header, rows, align=None):
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def nan(x):
    return x != x


def ms(seconds, digits=None):
    if seconds is None or nan(seconds):
        return "-"
    value = seconds * 1000
    if digits is None:
        if value < 1:
            return f"{value * 1000:.1f} µs"
        digits = 0 if value >= 100 else 1 if value >= 10 else 2
    return f"{value:.{digits}f} ms"


def ns(seconds):
    return "-" if seconds is None else f"{seconds * 1e9:,.0f} ns"


def spread(values, unit=ms):
    """'median (min–max)' of a list of repeats."""
    values = [v for v in values if v is not None and not nan(v)]
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return unit(med)
    return f"{unit(med)} ({unit(min(values))} – {unit(max(values))})"


def med(values):
    values = [v for v in values if v is not None and not nan(v)]
    return statistics.median(values) if values else float("nan")


def ratio(yardstick, kiln):
    """How many times Kiln's figure is better: yardstick ÷ Kiln for times."""
    if not kiln or nan(kiln) or yardstick is None or nan(yardstick):
        return "-"
    r = yardstick / kiln
    return f"**{r:.2f}x**" if r < 1 else f"{r:.1f}x" if r < 100 else f"{r:,.0f}x"


# --- 1. compile ---------------------------------------------------------------

CUBIN_ARCHS, PTX_TARGETS = 7, 5


def render_compile(d, headline, behind):
    examples, kiln, numba, specs = d["examples"], d["kiln"], d["numba"], d["specs"]
    out = []

    def kv(e, key):
        return [r[key] for r in kiln[e]]

    def nv(e, fn):
        return [fn(r) for r in numba[e]]

    def imp(r):
        return r["import_numba_s"] + r["import_example_s"]

    rows, cold_rows, ptx_rows = [], [], []
    tot = {k: [0.0] * d["repeats"] for k in ("k1", "kN", "n", "np", "cold", "ncold", "ncoldi", "kptx", "nptx")}
    total_specs = 0
    for e in examples:
        s = specs[e]
        total_specs += s
        per = s * CUBIN_ARCHS
        k1, kN, cold, kptx = kv(e, "fatbin_j1"), kv(e, "fatbin_jN"), kv(e, "cold_sm75"), kv(e, "ptx_j1")
        n, nproc = nv(e, lambda r: r["total_s"]), nv(e, lambda r: r["process_s"])
        ncold, ncoldi = nv(e, lambda r: r["first_arch_all_specs_s"]), nv(e, lambda r: imp(r) + r["first_arch_all_specs_s"])
        nptx = nv(e, lambda r: r["compile_ptx_s"])
        for key, values in (("k1", k1), ("kN", kN), ("n", n), ("np", nproc), ("cold", cold), ("ncold", ncold),
                            ("ncoldi", ncoldi), ("kptx", kptx), ("nptx", nptx)):
            for i, v in enumerate(values):
                tot[key][i] += v
        rows.append([e, s, spread(k1), spread(kN), spread(n), spread(nproc), ms(med(k1) / per), ms(med(n) / per),
                     ratio(med(n), med(k1)), ratio(med(nproc), med(k1))])
        cold_rows.append([e, s, spread(cold), spread(ncold), spread(ncoldi), ratio(med(ncold), med(cold)),
                          ratio(med(ncoldi), med(cold))])
        ptx_rows.append([e, s, spread(kptx), spread(nptx), ms(med(kptx) / (s * PTX_TARGETS)),
                         ms(med(nptx) / (s * PTX_TARGETS)), ratio(med(nptx), med(kptx))])
    per = total_specs * CUBIN_ARCHS
    rows.append(["**all**", total_specs, spread(tot["k1"]), spread(tot["kN"]), spread(tot["n"]), spread(tot["np"]),
                 ms(med(tot["k1"]) / per), ms(med(tot["n"]) / per), ratio(med(tot["n"]), med(tot["k1"])),
                 ratio(med(tot["np"]), med(tot["k1"]))])
    cold_rows.append(["**all**", total_specs, spread(tot["cold"]), spread(tot["ncold"]), spread(tot["ncoldi"]),
                      ratio(med(tot["ncold"]), med(tot["cold"])), ratio(med(tot["ncoldi"]), med(tot["cold"]))])
    ptx_rows.append(["**all**", total_specs, spread(tot["kptx"]), spread(tot["nptx"]),
                     ms(med(tot["kptx"]) / (total_specs * PTX_TARGETS)),
                     ms(med(tot["nptx"]) / (total_specs * PTX_TARGETS)), ratio(med(tot["nptx"]), med(tot["kptx"]))])
    out.append("Cold, a fresh process's first cubins: every specialization for sm_75 only "
               "(Kiln: `kiln build EXAMPLE --emit cubin --arch 75-real -j 1`, the whole process; Numba: the "
               "sm_75 `compile_ptx` calls and ptxas runs, import excluded and included). Median (min – max) "
               f"of {d['repeats']} repeats:\n\n")
    out.append(table(["example", "specs", "Kiln (process)", "Numba excl. import", "Numba incl. import",
                      "Numba excl. ÷ Kiln", "Numba incl. ÷ Kiln"], cold_rows))
    out.append("\nFull build for the default architectures (7 cubins + compute_90 PTX), fresh process each "
               "(Kiln `-j1` and the default `-jN`; Numba sequential, so comparable with `-j1`; "
               "per spec·arch = total / (specs × 7)):\n\n")
    out.append(table(["example", "specs", "Kiln -j1", "Kiln -jN", "Numba excl. import", "Numba process",
                      "Kiln -j1 /spec·arch", "Numba excl. import /spec·arch", "Numba excl. ÷ Kiln -j1",
                      "Numba process ÷ Kiln -j1"], rows))
    out.append("\nThe compilers alone, no ptxas: `kiln build --emit ptx -j 1` (process, five PTX targets) "
               "against the `compile_ptx` calls (import excluded):\n\n")
    out.append(table(["example", "specs", "Kiln", "Numba compile_ptx", "Kiln /spec·target",
                      "Numba /spec·target", "Numba ÷ Kiln"], ptx_rows))
    refused = sorted({m for e in examples for r in numba[e] for m in r["refused"]})
    out.append("\n`compile_ptx` refused: " + ("; ".join(refused) if refused else "nothing") + ".\n")
    if d.get("curand"):
        c = d["curand"][0]["specs"]
        j1 = [r["fatbin_j1"] for r in d["curand"]]
        out.append(f"\n`examples/curand_interop` (Kiln only: nvcc and nvJitLink; `compile_ptx` does not link "
                   f"CUDA C): {c} specs, -j1 {spread(j1)}, -jN {spread([r['fatbin_jN'] for r in d['curand']])}.\n")
    cold_ratio = med(tot["ncold"]) / med(tot["cold"])
    full_ratio = med(tot["n"]) / med(tot["k1"])
    headline.append(["1. cold compile, per spec (sm_75, ptxas included)",
                     ms(med(tot["cold"]) / total_specs), ms(med(tot["ncold"]) / total_specs) + " (import excluded)",
                     ratio(med(tot["ncold"]), med(tot["cold"]))])
    headline.append(["1. full build, default archs, per spec·arch, -j1",
                     ms(med(tot["k1"]) / per), ms(med(tot["n"]) / per) + " (import excluded)",
                     ratio(med(tot["n"]), med(tot["k1"]))])
    for e in examples:
        if med([r["total_s"] for r in numba[e]]) < med(kv(e, "fatbin_j1")):
            behind.append(f"compile: the full `-j1` build of `{e}` is slower than Numba's compile_ptx + ptxas")
    if cold_ratio < 5 or full_ratio < 5:
        which = []
        if cold_ratio < 5:
            which.append(f"cold sm_75 builds {cold_ratio:.1f}x")
        if full_ratio < 5:
            which.append(f"full `-j1` builds {full_ratio:.1f}x")
        behind.append("compile: short of the 5x goal against Numba with Numba's import excluded: " +
                      ", ".join(which))
    return "".join(out)


# --- 2. build -----------------------------------------------------------------

def lookup_times(d):
    """Each warm hit's step as the build timed it, where the results have them."""
    times = [t for j in d["jobs"] for t in d["runs"][str(j)].get("lookup", [])]
    if not times:
        return ""
    return (f" Lookup as the build times each hit (key, index, blob reads and checks): median "
            f"{ms(med(times), 3)}, slowest {ms(max(times), 3)}.")


def render_build(d, headline, behind):
    rows = []
    for j in d["jobs"]:
        r = d["runs"][str(j)]
        cold = med(r["cold"])
        rows.append([f"-j{j}", spread(r["cold"]), spread(r["uncached"]), spread(r["warm"]),
                     f"{med(r['warm']) / cold * 100:.1f}%", spread(r["edit"]), f"{med(r['edit']) / cold * 100:.0f}%",
                     spread(r["moved"]), f"{med(r['moved']) / cold * 100:.1f}%"])
    rep = d["edit_report"]
    out = [f"A generated module of {d['kernels']} kernels (one specialization each), Kiln's default architecture "
           f"list ({d['lookups']} cache lookups per build), each build a fresh `kiln build --module kernels -v -j J` "
           f"process with its own cache folder; median (min – max) of {d['repeats']} repeats after "
           f"{d['warmups']} warm-up round(s):\n\n"]
    out.append(table(["jobs", "cold, empty cache", "cold, `--no-cache`", "warm, all hits", "warm ÷ cold",
                      f"after editing `{d['edited']}`", "edit ÷ cold", "after a line inserted on top",
                      "moved ÷ cold"], rows))
    out.append(f"\nThe edit recompiled {', '.join(rep['recompiled'])} only ({rep['misses']} misses, {rep['hits']} "
               f"hits). Front end alone (`--emit typed`): {spread(d['typed'])}. Lookup, upper bound "
               f"(warm ÷ lookups): {ms(med(d['runs'][str(d['jobs'][0])]['warm']) / d['lookups'], 3)}."
               + lookup_times(d) + "\n")
    out.append("\nNo yardstick: Numba compiles when a kernel is first called and has no whole-module build; "
               "figure 1 compares the compilers.\n")
    for j in d["jobs"]:
        r = d["runs"][str(j)]
        if med(r["cold"]) > 1.25 * med(r["uncached"]):
            behind.append(f"build: filling the cache makes a cold `-j{j}` build {med(r['cold']) / med(r['uncached']):.1f}x "
                          "as long as the same build with `--no-cache`")
    first = d["runs"][str(d["jobs"][0])]
    headline.append([f"2. warm rebuild, {d['kernels']} kernels, -j{d['jobs'][0]}", ms(med(first["warm"])),
                     f"cold {ms(med(first['cold']))}", f"{med(first['warm']) / med(first['cold']) * 100:.1f}% of cold"])
    if med(first["warm"]) / med(first["cold"]) > 0.05:
        behind.append("build: the warm rebuild is above the 5%-of-cold goal")
    if med(first["moved"]) / med(first["cold"]) > 0.05:
        behind.append("build: a line inserted above every kernel costs more than the 5%-of-cold goal")
    return "".join(out)


# --- 3. startup ---------------------------------------------------------------

def render_startup(d, headline, behind):
    res, labels = d["results"], d["labels"]
    rows = []
    for side, runs in res.items():
        rows.append([labels[side], spread([r["import_s"] for r in runs]),
                     spread([r["first_launch_s"] for r in runs]), ms(med([r["process_s"] for r in runs]))])
    cpu, small, sim, cuda, numba = list(res)
    first = {side: med([r["first_launch_s"] for r in runs]) for side, runs in res.items()}
    out = [f"`{d['example']}.{d['kernel']}`; {d['repeats']} fresh processes per side after {d['warmups']} "
           f"warm-up process(es); times from just before `import` to the end of the first launch; median "
           f"(min – max):\n\n"]
    out.append(table(["side", "import", "import → first finished launch", "whole process (median)"], rows))
    out.append("\n" + table(["comparison", "Kiln", "yardstick", "yardstick ÷ Kiln"], [
        [f"Kiln's CPU engine vs Numba's simulator, {d['sim_elements']:,} elements (the yardstick)",
         ms(first[small]), ms(first[sim]), ratio(first[sim], first[small])],
        [f"Kiln's CPU engine, {d['elements']:,} elements, vs Numba's import + compile_ptx + ptxas (no launch)",
         ms(first[cpu]), ms(first[numba]), ratio(first[numba], first[cpu])],
        [f"Kiln's CUDA path (stand-in driver), {d['elements']:,} elements, vs the same",
         ms(first[cuda]), ms(first[numba]), ratio(first[numba], first[cuda])],
    ]))
    headline.append(["3. import → first finished launch (CPU engine vs simulator)", ms(first[small]),
                     ms(first[sim]), ratio(first[sim], first[small])])
    for k, y, what in ((small, sim, "the simulator"), (cpu, numba, "Numba's import + compile")):
        if first[k] > first[y]:
            behind.append(f"startup: Kiln's first launch is slower than {what}")
    return "".join(out)


# --- 3c. imports by kernel count ----------------------------------------------

# The goal: importing the largest module costs at most this much more than
# importing a module of one kernel.
IMPORT_GOAL_S = 0.005
IMPORT_GOAL_BYTES = 2 * 2**20


def render_imports(d, headline, behind):
    res = {int(count): runs for count, runs in d["results"].items()}
    rows = []
    for count, runs in sorted(res.items()):
        rows.append([f"{count:,}", spread([r["import_s"] for r in runs]), spread([r["import_cpu_s"] for r in runs]),
                     f"{med([r['rss_bytes'] for r in runs]) / 2**20:.2f} MB"])
    out = [f"{d['repeats']} fresh processes per module after {d.get('warmups', 1)} warm-up process(es), "
           "KILN_TARGET=cpu, NumPy and the runtime imported before the clock; median (min – max):\n\n"]
    out.append(table(["kernels", "import, wall time", "import, CPU time", "RSS growth (median)"], rows))
    fewest, most = min(res), max(res)
    if fewest != most:
        extra = med([r["import_cpu_s"] for r in res[most]]) - med([r["import_cpu_s"] for r in res[fewest]])
        extra_rss = med([r["rss_bytes"] for r in res[most]]) - med([r["rss_bytes"] for r in res[fewest]])
        out.append(f"\n{most:,} kernels against {fewest:,}: {ms(extra)} more CPU time (goal at most "
                   f"{ms(IMPORT_GOAL_S)}) and {extra_rss / 2**20:.2f} MB more RSS (goal at most "
                   f"{IMPORT_GOAL_BYTES / 2**20:.0f} MB).\n")
        headline.append([f"3c. import of {most:,} kernels over {fewest:,} (CPU time; RSS)",
                         f"+{ms(extra)}; +{extra_rss / 2**20:.2f} MB",
                         f"goal +{ms(IMPORT_GOAL_S)}; +{IMPORT_GOAL_BYTES / 2**20:.0f} MB", "-"])
        if extra > IMPORT_GOAL_S or extra_rss > IMPORT_GOAL_BYTES:
            behind.append(f"imports: a module of {most:,} kernels costs {ms(extra)} and "
                          f"{extra_rss / 2**20:.2f} MB more to import than one of {fewest:,} "
                          f"(goal {ms(IMPORT_GOAL_S)}, {IMPORT_GOAL_BYTES / 2**20:.0f} MB)")
    out.append("\n![Import time and memory against kernel count](benchmarks/imports.svg)\n")
    return "".join(out)


# --- 3b. first call -----------------------------------------------------------

def render_firstcall(d, headline, behind):
    res = d["results"]
    cold, warm, numba = list(res)
    rows = []
    for side, runs in res.items():
        rows.append([side, spread([r["import_s"] for r in runs]), spread([r["first_call_s"] for r in runs]),
                     spread([r["total_s"] for r in runs])])
    first = {side: med([r["first_call_s"] for r in runs]) for side, runs in res.items()}
    total = {side: med([r["total_s"] for r in runs]) for side, runs in res.items()}
    lazy = min(r["lazy_launch_s"] for r in res[warm])
    built = min(r["built_launch_s"] for r in res[warm])
    own = max(lazy - built, 0.0)
    out = [f"{d['repeats']} fresh processes per side after {d['warmups']} warm-up process(es), "
           f"{d['elements']:,} float32 elements; median (min – max):\n\n"]
    out.append(table(["side", "import", "first call (import excluded)", "import + first call"], rows))
    out.append("\n" + table(["comparison", "Kiln", "Numba", "Numba ÷ Kiln"], [
        ["first call, cold cache, import included", ms(total[cold]), ms(total[numba]),
         ratio(total[numba], total[cold])],
        ["first call, cold cache, import excluded", ms(first[cold]), ms(first[numba]),
         ratio(first[numba], first[cold])],
        ["first call, warm cache, import excluded", ms(first[warm]), ms(first[numba]),
         ratio(first[numba], first[warm])],
    ]))
    out.append(f"\nA launch of one element after the first call: {ns(lazy)} through the lazy kernel, "
               f"{ns(built)} through the kernel object it dispatches to (what a built module's kernel is): "
               f"{ns(own)} of the lazy kernel's own (fastest of 5 loops of {d['calls']:,} launches).\n")
    headline.append(["3b. first call of a lazy kernel, cold cache, import included", ms(total[cold]),
                     ms(total[numba]), ratio(total[numba], total[cold])])
    if total[numba] / total[cold] < 10:
        behind.append("firstcall: the cold first call, import included, is short of the 10x goal")
    if first[numba] / first[cold] < 10:
        behind.append("firstcall: the cold first call, import excluded, is short of the 10x goal "
                      f"({first[numba] / first[cold]:.1f}x)")
    if first[warm] > 5e-3:
        behind.append("firstcall: the warm-cache first call is above the 5 ms goal")
    if own > 1e-6:
        behind.append(f"firstcall: a lazy kernel's own cost per launch ({ns(own)}) is above the 1 µs goal")
    return "".join(out)


# --- 4. dispatch --------------------------------------------------------------

def render_dispatch(d, headline, behind):
    kiln, numba = d["results"]["kiln"], d["results"].get("numba", {})
    rows = []
    for name, times in kiln.items():
        other = numba.get(name)
        rows.append([f"`{name}`", spread(times, ns), spread(other, ns) if other else "-",
                     ratio(min(other), min(times)) if other else "-"])
    out = [f"Per call, from {d['repeats']} loops of {d['calls']:,} calls after 1,000 untimed ones; median "
           "(min – max) over the loops; the ratio is of the fastest loops:\n\n"]
    out.append(table(["statement", "Kiln", "Numba", "Numba ÷ Kiln"], rows))
    key = "kernel[grid, block](a, b, c)"
    if key in numba:
        headline.append(["4. dispatch per launch, device arrays, no launch", ns(min(kiln[key])),
                         ns(min(numba[key])), ratio(min(numba[key]), min(kiln[key]))])
        if min(kiln[key]) > min(numba[key]):
            behind.append("dispatch: Kiln's launch path costs more than Numba's")
        if min(kiln[key]) > 1e-6:
            behind.append("dispatch: above the 1 µs goal")
    return "".join(out)


# --- 5. registers -------------------------------------------------------------

def render_registers(d, headline, behind):
    archs = d["archs"]
    by_kernel = {}
    for rec in d["records"]:
        by_kernel.setdefault((rec["example"], rec["kernel"]), {})[rec["arch"]] = rec
    rows, worse, better, equal = [], [], 0, 0
    for (example, kernel), per_arch in by_kernel.items():
        cells = []
        for a in archs:
            rec = per_arch.get(a)
            if not rec:
                cells.append("-")
                continue
            k, n = rec["kiln"]["registers"], rec["numba"]["registers"]
            cells.append(f"{k} / {n}" + (f" **+{k - n}**" if k > n else ""))
            if k > n:
                worse.append(f"{kernel} sm_{a} ({k} / {n})")
            elif k < n:
                better += 1
            else:
                equal += 1
        recs = list(per_arch.values())

        def mx(side, *fields):
            return max(sum(r[side][f] for f in fields) for r in recs)

        rows.append([example, kernel, *cells,
                     f"{mx('kiln', 'spill_stores', 'spill_loads')} / {mx('numba', 'spill_stores', 'spill_loads')}",
                     f"{mx('kiln', 'stack')} / {mx('numba', 'stack')}",
                     f"{mx('kiln', 'shared')} / {mx('numba', 'shared')}",
                     f"{mx('kiln', 'const0')} / {mx('numba', 'const0')}",
                     f"{mx('kiln', 'const_other')} / {mx('numba', 'const_other')}",
                     d["synthesized"].get(example, "")])
    out = ["Kiln / Numba per kernel; registers per architecture (**+N**: Kiln uses N more); spills, stack, "
           "shared and constant memory in bytes, the largest over the architectures (constant bank 0 holds the "
           "kernel parameters; other banks the module's constants):\n\n"]
    out.append(table(["example", "kernel", *[f"sm_{a} regs" for a in archs], "spill st+ld", "stack", "shared",
                      "const bank 0", "const other", "note"], rows, "ll" + "r" * (len(archs) + 5) + "l"))
    total = len(worse) + better + equal
    spills = sum(1 for r in d["records"] if r["kiln"]["spill_stores"] + r["kiln"]["spill_loads"])
    out.append(f"\nKiln uses more registers in {len(worse)} of {total} kernel × architecture rows, fewer in "
               f"{better}, as many in {equal}; Kiln spills in {spills} rows.\n")
    if worse:
        out.append("More registers than Numba: " + ", ".join(worse) + ".\n")
        behind.append(f"generated code: Kiln uses more registers than Numba in {len(worse)} of {total} rows "
                      f"({', '.join(worse[:6])}{', ...' if len(worse) > 6 else ''})")
    for field, what in (("shared", "shared memory"), ("stack", "stack"), ("const_other", "module constants")):
        more = sorted({f"{r['kernel']} ({r['kiln'][field]} / {r['numba'][field]} B)" for r in d["records"]
                       if r["kiln"][field] > r["numba"][field]})
        if more:
            out.append(f"More {what} than Numba: " + ", ".join(more) + ".\n")
            behind.append(f"generated code: more {what} than Numba in " + ", ".join(more))
    if d.get("refused"):
        out.append("`compile_ptx` refused: " + "; ".join(f"{k}: {v}" for k, v in d["refused"].items()) + "\n")
    headline.append(["5. registers (kernel × arch rows)", f"fewer in {better}, more in {len(worse)}",
                     f"of {total}", "-"])
    return "".join(out)


# --- 6. cpu -------------------------------------------------------------------

def per_unit(seconds, units):
    v = seconds / units * 1e9
    return f"{v / 1e6:.2f} ms" if v >= 1e6 else f"{v / 1e3:.1f} µs" if v >= 1e3 else f"{v:.2f} ns"


def render_cpu(d, headline, behind):
    rows, failures = [], {}
    pick = min if d["stat"] == "min" else med
    wins, wins_numpy, loses_numpy = [], [], []
    for name, k in d["kiln"].items():
        units = k["size"]
        kt = pick(k["kiln_times"])
        nt = pick(k["numpy_times"]) if "numpy_times" in k else None
        s = d["sim"].get(name, {})
        sim_cell = sim_ratio = "-"
        if "sim_times" in s:
            st = pick(s["sim_times"])
            sim_cell = f"{per_unit(st, s['size'])} ({s['size']:,})"
            sim_ratio = ratio(st / s["size"], kt / units)
            wins.append((st / s["size"]) / (kt / units))
        elif "sim_error" in s:
            sim_cell = "fails (see below)"
            failures.setdefault(s["sim_error"], []).append(name)
        rows.append([name, k["config"], f"{units:,} {k['unit']}s", spread(k["kiln_times"]), per_unit(kt, units),
                     spread(k["numpy_times"]) if nt else "-", ratio(nt, kt) if nt else "-", sim_cell, sim_ratio,
                     k["check"]])
        if nt:
            (wins_numpy if nt >= kt else loses_numpy).append(f"{name} ({ratio(nt, kt).strip('*')})")
    out = [f"Kiln and NumPy: median (min – max) of {d['repeats']} launches after one checked warm-up launch; "
           f"the per-unit figures and ratios use the {'fastest' if d['stat'] == 'min' else 'median'} run. "
           f"Simulator: {d['sim_repeats']} run(s) at small sizes, compared per unit:\n\n"]
    out.append(table(["kernel", "launch", "size", "Kiln", "Kiln /unit", "NumPy", "NumPy ÷ Kiln",
                      "simulator /unit (size)", "simulator ÷ Kiln, per unit", "Kiln result"], rows,
                     "lllrrrrrrl"))
    for error, names in failures.items():
        out.append(f"\nThe simulator fails on {', '.join(names)}: `{error}`\n")
    out.append(f"\nIn this run the engine beats NumPy on {', '.join(wins_numpy) or 'nothing'}, and **loses to "
               f"NumPy on {', '.join(loses_numpy) or 'nothing'}** (NumPy ÷ Kiln).\n")
    if loses_numpy:
        behind.append("cpu: NumPy is faster than the CPU engine on " + ", ".join(loses_numpy))
    if wins:
        headline.append(["6. CPU engine vs simulator, per element (range over kernels)", "-", "-",
                         f"{min(wins):,.0f}x – {max(wins):,.0f}x"])
    return "".join(out)


def render_checks(d, headline, behind):
    best = d["best"]
    rows, ratios = [], []
    for case, checked in best["checked"].items():
        unchecked = best["unchecked"][case]
        ratios.append(checked / unchecked)
        rows.append([case, ms(checked), ms(unchecked), f"{checked / unchecked:.2f}"])
    out = [f"Fastest of {d['rounds']} rounds x {d['repeats']} launches per configuration, the two "
           "configurations taking turns in fresh processes:\n\n"]
    out.append(table(["kernel", "checked (default)", "unchecked (`KILN_CPU_BOUNDSCHECK=0`)",
                      "checked ÷ unchecked"], rows, "lrrr"))
    if ratios:
        out.append(f"\nchecked ÷ unchecked: median {med(ratios):.2f}, range {min(ratios):.2f} – "
                   f"{max(ratios):.2f}.\n")
    return "".join(out)


def render_polls(d, headline, behind):
    rows, ratios = [], []
    for case, kept in d["best"].items():
        polling, bounded = kept["fastest"]["polling"], kept["fastest"]["bounded"]
        ratios.append(polling / bounded)
        rows.append([case, kept["size"], ms(polling), ms(bounded), f"{polling / bounded:.2f}"])
    out = [f"Fastest of {d['rounds']} rounds x {d['repeats']} launches of each kernel, the two of a pair "
           "taking turns launch by launch:\n\n"]
    out.append(table(["loop", "size", "polling (`range(k)`)", "bounded (`range(min(k, 4096))`)",
                      "polling ÷ bounded"], rows, "llrrr"))
    if ratios:
        out.append(f"\npolling ÷ bounded: median {med(ratios):.2f}, range {min(ratios):.2f} – "
                   f"{max(ratios):.2f}.\n")
        headline.append(["6e. interrupt polls in loops that can run long (polling ÷ bounded, median)",
                         "-", "-", f"{med(ratios):.2f}"])
    return "".join(out)


# --- 7. check -----------------------------------------------------------------

def render_check(d, headline, behind):
    times = [t / 1000 for t in d["check_ms"]]
    out = [f"`kiln check` on a {d['lines']}-line module ({d['kernels']} kernels), whole process, "
           f"{d['repeats']} runs after {d['warmups']} warm-up(s): {spread(times)} (goal: under 100 ms; no "
           "yardstick: Numba has no check without compiling).\n"]
    headline.append([f"7. `kiln check`, {d['lines']}-line module", ms(med(times)), "goal 100 ms",
                     f"{0.1 / med(times):.1f}x under"])
    if med(times) > 0.1:
        behind.append("check: above the 100 ms goal")
    mem = d.get("memory")
    if mem:
        peaks = mem["max_rss_kib"]
        k, n = peaks["kiln build"], peaks["Numba compile_ptx + ptxas"]

        def mib(kib):
            return f"{kib / 1024:.0f} MiB"

        out.append(f"\nPeak memory (maximum resident set size, `/usr/bin/time -v`) compiling "
                   f"`examples/{mem['example']}.py` for the default architectures, {len(k)} run(s):\n\n")
        out.append(table(["what", "max RSS, median (min – max)"], [
            [f"`{mem['kiln_command']}`", spread(k, mib)],
            [f"Numba: `bench/numba_side.py compile {mem['example']}`", spread(n, mib)],
            ["Numba ÷ Kiln", ratio(med(n), med(k))]]))
        headline.append([f"7. peak memory, `kiln build` {mem['example']}", mib(med(k)), mib(med(n)),
                         ratio(med(n), med(k))])
        if med(k) > med(n):
            behind.append("check: `kiln build` peaks above Numba's memory")
    return "".join(out)


# --- 8. remote ----------------------------------------------------------------

REMOTE_GOALS = {"warm Redis": ("≤ 10% of no remote", 0.10), "warm WebDAV": ("≤ 10% of no remote", 0.10),
                "unreachable Redis": ("≤ +5%", 1.05), "unreachable WebDAV": ("≤ +5%", 1.05)}


def render_remote(d, headline, behind):
    times = d["times"]
    base = med(times["no remote"])
    rows = []
    for name, values in times.items():
        value = med(values)
        compared = ("100%" if name == "no remote" else f"{value / base * 100:.1f}%" if name.startswith("warm")
                    else f"{(value / base - 1) * 100:+.1f}%")
        goal = "-"
        if name in REMOTE_GOALS:
            text, bound = REMOTE_GOALS[name]
            met = value / base <= bound
            goal = f"{text}: {'met' if met else '**missed**'}"
            if not met and name.startswith("warm"):
                behind.append(f"remote: a build served by a {name} remote takes {compared} of one "
                              "without a remote (goal 10%)")
            elif not met:
                behind.append(f"remote: an {name} remote adds {compared} to a build (goal +5%)")
        counts = d["lookups"][name]
        rows.append([name, spread(values), compared, goal,
                     " / ".join(str(counts[s]) for s in ("remote hit", "local hit", "compiled"))])
    out = [f"A generated module of {d['kernels']} kernels, architectures: {d['arch']}; each build a "
           f"fresh `kiln build --module kernels --ext-suffix SUFFIX -j {d['jobs']}` with an empty local "
           f"cache (the warm local row: a full one), median (min – max) of {d['repeats']} rounds after "
           f"{d['warmups']} warm-up round(s); the distant remotes answer "
           f"{d.get('distance', 0) * 1000:g} ms, the late ones {d['delay']:g} s after each request "
           "(default `operation-timeout`, 1 s).\n\n"]
    out.append(table(["remote", "wall time", "against no remote", "goal",
                      "lookups: remote hit / local hit / compiled"], rows, "lrrrr"))
    warm = [med(times[n]) / base for n in ("warm Redis", "warm WebDAV") if n in times]
    if warm:
        headline.append(["8. cold build served by a warm remote (Redis, WebDAV)",
                         f"{min(warm) * 100:.0f}% – {max(warm) * 100:.0f}%", "goal 10%", "-"])
    return "".join(out)


def kib(n):
    return f"{n / 1024:,.1f} KiB"


def render_storage(d, headline, behind):
    fatbin = d["kinds"].get("fatbin", [0, 0])[1]
    whole = d["bytes"] - fatbin + d["fatbin_whole"]
    saved = 1 - d["bytes"] / whole if whole else 0
    kinds = sorted(d["kinds"])
    out = [f"A generated module of {d['kernels']} kernels, architectures: {d['arch']}; one "
           f"`kiln build --emit fatbin` into an empty cache ({d['entries']} entries). The yardstick is "
           "the same cache with its fat binaries stored whole (the bytes of the `.fatbin` files the "
           "build wrote in place of the fatbin entries' parts), as Kiln kept them before.\n\n"]
    out.append(table(["layout", "cache bytes (each blob once)"]
                     + [f"{kind} entries" for kind in kinds],
                     [["fat binaries in parts (this Kiln)", kib(d["bytes"])]
                      + [kib(d["kinds"][kind][1]) for kind in kinds],
                      ["fat binaries whole", kib(whole)]
                      + [kib(d["fatbin_whole"] if kind == "fatbin" else d["kinds"][kind][1])
                         for kind in kinds]]))
    out.append(f"\nThe parts save {saved * 100:.0f}% of the cache's bytes.\n\n")
    out.append(f"Then {d['rows']:,} entries without blobs are written into the index (as many "
               "builds leave) and `kiln cache prune --older-than 1d` drops them:\n\n")
    out.append(table(["index file (with its write-ahead log)", "size"],
                     [["with the extra rows", kib(d["index_grown"])],
                      ["after prune", kib(d["index_pruned"])]]))
    headline.append(["9. cache bytes of one module build", kib(d["bytes"]),
                     f"fat binaries whole {kib(whole)}", f"{d['bytes'] / whole * 100:.0f}%"])
    if d["index_pruned"] > d["index_grown"] / 2:
        behind.append(f"storage: prune left the index at {kib(d['index_pruned'])} "
                      f"(was {kib(d['index_grown'])})")
    return "".join(out)


# --- 6c. launch ----------------------------------------------------------------

ONE_BLOCK = "one_block[1, 32](a)"
NJIT = "njit nothing(a)"
# Each 2-D launch and the 1-D launch of the same blocks and elements.
LAUNCH_PAIRS = {
    "fill_2d_flat[(64, 64), (16, 16)] (same 1-D array)": "fill_1d[4096, 256] (2^20 elements)",
    "fill_2d[(64, 64), (16, 16)] (1024 x 1024 array)": "fill_1d[4096, 256] (2^20 elements)",
    "fill_2d[(128, 128), (8, 8)] (1024 x 1024 array)": "fill_1d[16384, 64] (2^20 elements)",
}


def per_call(seconds):
    return ms(seconds) if seconds >= 1e-3 else f"{seconds * 1e6:.2f} µs"


def render_launch(d, headline, behind):
    results = d["results"]
    out = [f"Per call, median (min – max) over {d['repeats']} loops of {d['calls']:,} calls (the fills: "
           f"{d['calls'] // 100:,} calls), after untimed warm-up calls:\n\n"]
    out.append(table(["statement", "per call"], [[f"`{name}`", spread(times, per_call)]
                                                  for name, times in results.items()]))
    cpu = d.get("cpu", {})
    pairs = [(two, one) for two, one in LAUNCH_PAIRS.items() if two in results and one in results]
    rows = [[f"`{two}`", f"`{one}`", f"{med(results[two]) / med(results[one]):.2f}x",
             f"{med(cpu[two]) / med(cpu[one]):.2f}x" if two in cpu and one in cpu else "-"]
            for two, one in pairs]
    out.append("\n2-D against 1-D, same elements and blocks, medians of the elapsed time and of the process's "
               "CPU time (all threads) per call; goal: at most 1.2x:\n\n")
    out.append(table(["2-D launch", "1-D launch", "2-D ÷ 1-D, elapsed", "2-D ÷ 1-D, CPU time"], rows, "llrr"))
    one_block, njit = med(results[ONE_BLOCK]), med(results[NJIT])
    headline.append(["6c. one-block CPU launch from Python (yardstick: an `@njit` call)", per_call(one_block),
                     per_call(njit), ratio(njit, one_block)])
    if one_block > 2e-6:
        behind.append("launch: a one-block CPU launch takes more than the 2 µs goal")
    worst = max((med(results[two]) / med(results[one]) for two, one in pairs), default=0)
    if worst > 1.2:
        behind.append(f"launch: a 2-D launch takes {worst:.2f}x the 1-D launch of the same elements (goal 1.2x)")
    return "".join(out)


def render_scale(d, headline, behind):
    rows = []
    for n, r in d["results"].items():
        kiln, numba = med(r["kiln_s"]), med(r["numba_s"])
        peak = med(r["kiln_max_rss_kib"]) / 1024
        host = [s for run in r["kiln_host_s_per_kernel"] for s in run]
        rows.append([n, spread(r["kiln_s"], seconds), f"{peak:.0f} MiB",
                     f"{ms(med(host))} ({ms(max(host))})", spread(r["numba_s"], seconds), ratio(numba, kiln)])
        headline.append([f"2b. build of {n} kernels, -j 1, default archs (yardstick: Numba compile_ptx + ptxas)",
                         seconds(kiln), seconds(numba), ratio(numba, kiln)])
        if numba / kiln < 5:
            behind.append(f"scale: a {n}-kernel build is {numba / kiln:.1f}x Numba's end to end (goal 5x)")
        if int(n) >= 500 and peak > 150:
            behind.append(f"scale: a {n}-kernel build peaks at {peak:.0f} MiB (goal 150 MiB)")
    out = [f"Median (min – max) of {d['repeats']} cold build(s) per size; every kernel `{d['signature']}`:\n\n"]
    out.append(table(["kernels", "kiln build --module -j 1", "peak memory", "host code a kernel: median (slowest)",
                      "Numba compile_ptx + ptxas", "Numba ÷ Kiln"], rows))
    out.append("\n![Build time against module size](benchmarks/build_scale.svg)\n")
    return "".join(out)


def seconds(value):
    return "-" if value is None or nan(value) else f"{value:.1f} s"


THROUGHPUT_YARDSTICKS = ["NumPy", "njit", "njit parallel"]
THROUGHPUT_GOALS = {"saxpy": {"NumPy": 1.0, "njit parallel": 0.7}, "stencil": {"NumPy": 1.0, "njit parallel": 0.5}}


def render_throughput(d, headline, behind):
    rows = []
    for case, r in d["results"].items():
        times = r["times"]
        kiln = med(times["Kiln"])
        for name, values in times.items():
            rows.append([case, r["size"], name, spread(values), "" if name == "Kiln" else ratio(med(values), kiln)])
        for yardstick in ("NumPy", "njit parallel"):
            headline.append([f"6d. {case} on the CPU engine (yardstick: {yardstick})", ms(kiln),
                             ms(med(times[yardstick])), ratio(med(times[yardstick]), kiln)])
            goal = THROUGHPUT_GOALS.get(case, {}).get(yardstick)
            if goal and med(times[yardstick]) / kiln < goal:
                behind.append(f"throughput: {case} runs at {med(times[yardstick]) / kiln:.2f}x {yardstick} "
                              f"(goal {goal}x)")
        if "Kiln, without barriers" in times:
            cost = kiln / med(times["Kiln, without barriers"])
            headline.append([f"6d. {case}: with barriers ÷ without (goal: at most 3x)", f"{cost:.1f}x", "-", "-"])
            if cost > 3:
                behind.append(f"throughput: {case} with barriers takes {cost:.1f}x the same kernel without them "
                              "(goal 3x)")
    out = [f"Median (min – max) of {d['repeats']} runs after a checked warm-up run; the last column is the "
           "yardstick's median over Kiln's (above 1x: Kiln is faster):\n\n"]
    out.append(table(["kernel", "size", "implementation", "time", "÷ Kiln"], rows, "lllrr"))
    out.append("\n![CPU engine throughput](benchmarks/cpu_throughput.svg)\n")
    return "".join(out)


RENDER = {"compile": render_compile, "build": render_build, "scale": render_scale, "startup": render_startup,
          "firstcall": render_firstcall, "imports": render_imports,
          "dispatch": render_dispatch, "registers": render_registers, "cpu": render_cpu, "checks": render_checks,
          "polls": render_polls,
          "launch": render_launch, "throughput": render_throughput, "check": render_check,
          "remote": render_remote,
          "storage": render_storage}

# The docs tests leave the measurements out: tests/bench runs the harness.
NOT_RUN_BY_DOC_TESTS = "<!-- doc-test: skip a measurement; tests/bench runs the harness with --smoke -->\n"


def render(context, results):
    headline, behind, sections = [], [], []
    for result in results:
        name = result["name"]
        body = [f"## {TITLES[name]}\n\n", template(name), NOT_RUN_BY_DOC_TESTS,
                "```sh\n" + result["command"] + "\n```\n\n"]
        if "error" in result:
            body.append(f"**Not measured: the script failed ({result['error']}).**\n\n```\n{result['output']}\n```\n")
            behind.append(f"{name}: not measured (the script failed)")
        else:
            lo, hi = result["load"]
            body.append(f"Load average {lo} before, {hi} after; {result['seconds']:.0f} s.\n\n")
            body.append(RENDER[name](result["data"], headline, behind))
            reading = TEMPLATES / f"{name}.reading.md"
            if reading.exists() and not context["smoke"]:
                body.append("\n" + reading.read_text().strip() + "\n")
        sections.append("".join(body))
    sections += [f"## {title}\n\n" + template(name).rstrip() + "\n" for name, title in MEASURED_APART.items()]
    c = context
    head = ["# Benchmarks\n\n"]
    if c["smoke"]:
        head.append("**Smoke run (`--smoke`): one repeat at the smallest sizes, to check that the harness runs. "
                    "The numbers mean nothing.**\n\n")
    head.append("Generated by `bench/run.py` from one run of every benchmark script in `bench/`; do not edit "
                "by hand (the explanations are `bench/templates/*.md`). Tests never time anything.\n\n")
    head.append(template("intro"))
    head.append(NOT_RUN_BY_DOC_TESTS + f"```sh\n{c['command']}\n```\n\n")
    head.append(table(["", ""], [
        ["date", c["date"]],
        ["machine", f"{c['nproc']} cores (`nproc`), {c['cpu']}, {c['platform']}, no GPU"],
        ["load average (1 min)", f"{c['load_start']} at the start, {c['load_end']} at the end "
                                 "(shared machine: other work inflates absolute times)"],
        ["Kiln", c["kiln"] + (f"; {c['build']}" if c.get("build") else "")],
        ["yardstick", f"{c['numba']}; {c['ptxas']}"],
        *[[f"re-measured {u['date']}", f"{', '.join(u['figures'])}: `{u['command']}`"]
          for u in c.get("updates", [])],
    ], "ll"))
    head.append("\n## Summary\n\nKiln's figure, the yardstick's from the same run, and how many times Kiln is "
                "ahead (**bold** below 1x: Kiln is behind):\n\n")
    head.append(table(["figure", "Kiln", "yardstick", "yardstick ÷ Kiln"], headline, "lrrr"))
    head.append("\n**Where Kiln is behind its yardstick or short of its goal:**\n\n" + ("".join(f"* {b}\n" for b in behind) if behind else
                                                     "* nowhere in this run\n") + "\n")
    closing = ("\n## Closing note\n\nKiln is ahead of its yardstick on every figure of the summary table "
               "except where listed here, from this run:\n\n" +
               ("".join(f"* {b}\n" for b in behind) if behind else "* nothing: Kiln is ahead everywhere\n"))
    return "".join(head) + "\n".join(sections) + closing
