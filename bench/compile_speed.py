"""Cold compile time per kernel specialization and architecture: Kiln vs Numba.

Goal: Kiln at least 5x faster than Numba's `compile_ptx`, ptxas
included on both sides.

    bash bench/setup.sh      # once: bench/.venv with numba 0.68.1, numba-cuda 0.30.4
    python3 bench/compile_speed.py [--repeats 3] [--examples vector_add,mandelbrot]
                                   [--kiln build/driver/kiln] [--no-curand] [--no-numba]
                                   [--json FILE]     # also save the raw measurements
    python3 bench/compile_speed.py --from-json FILE  # print their tables again

Every example of examples/*.py, every kernel specialization (ufuncs and
reductions included), Kiln's default architectures: sm_75, 80, 86, 89, 90,
100, 120 cubins and compute_90 PTX. Every measurement is a fresh process:

* Kiln: `kiln build EXAMPLE --emit fatbin -o TMP -j 1 --no-cache` (cold: the
  specialization cache would turn a repeat into lookups) and the same with
  the default -j (one job per core); wall time of the process. Also
  `--emit cubin --arch 75-real -j 1` (cold: the example's first cubins) and
  `--emit ptx -j 1` (Kiln's own compiler without ptxas: PTX for the five
  targets sm_75, 80, 86, 89, 90).
* Numba: `bench/numba_side.py compile EXAMPLE` in bench/.venv: imports numba
  and the example, then `numba.cuda.compile_ptx` for every specialization
  and each of the same five PTX targets, and ptxas (same flags as Kiln's:
  -O3, --maxrregcount, -g) for each of the seven cubin architectures from
  the same PTX Kiln uses (sm_100 and sm_120 from sm_90 PTX). Sequential, so
  comparable with Kiln -j 1. Kiln also runs fatbinary; Numba's side does not
  (it has no fat binaries).

Per spec x arch = total / (specializations x 7 cubin architectures). Every
figure is the median of --repeats runs. examples/curand_interop (nvcc and
nvJitLink) is timed for Kiln only: Numba's compile_ptx does not link CUDA C.
"""

import argparse
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402

CUBIN_ARCHS = 7  # sm_75, 80, 86, 89, 90, 100, 120
PTX_TARGETS = 5  # sm_75, 80, 86, 89, 90 (sm_100 and sm_120 cubins come from sm_90 PTX)
CURAND = bc.ROOT / "examples" / "curand_interop" / "curand_kernels.py"


def all_examples():
    return sorted(p.stem for p in (bc.ROOT / "examples").glob("*.py"))


def specializations_built(work, example_path):
    """How many specializations the manifest of a build into `work` lists
    (their fat binaries are per image, not per specialization)."""
    manifest = pathlib.Path(work) / f"{pathlib.Path(example_path).stem}.manifest.json"
    return len(json.loads(manifest.read_text())["specializations"])


def kiln_runs(kiln, example_path, work):
    """Wall times of the Kiln processes for one example, and its spec count."""
    out = str(work)
    runs = {}
    runs["fatbin_j1"], _ = bc.timed_run([kiln, "build", str(example_path), "--emit", "fatbin", "-o", out, "-j", "1",
                                         "--no-cache"])
    specs = specializations_built(out, example_path)
    runs["fatbin_jN"], _ = bc.timed_run([kiln, "build", str(example_path), "--emit", "fatbin", "-o", out, "--no-cache"])
    runs["cold_sm75"], _ = bc.timed_run([kiln, "build", str(example_path), "--emit", "cubin", "--arch", "75-real",
                                         "-o", out, "-j", "1", "--no-cache"])
    runs["ptx_j1"], _ = bc.timed_run([kiln, "build", str(example_path), "--emit", "ptx", "-o", out, "-j", "1",
                                      "--no-cache"])
    return runs, specs


def numba_run(python, example):
    wall, stdout = bc.timed_run([python, str(bc.BENCH / "numba_side.py"), "compile", example])
    result = json.loads(stdout.strip().splitlines()[-1])
    result["process_s"] = wall
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmups", type=int, default=1,
                        help="untimed rounds of the first example on both sides before the timed ones")
    parser.add_argument("--examples", help="comma-separated example names (default: all)")
    parser.add_argument("--kiln", default=bc.default_kiln())
    parser.add_argument("--no-numba", action="store_true", help="time Kiln only")
    parser.add_argument("--no-curand", action="store_true", help="skip examples/curand_interop")
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--from-json", help="print the tables of measurements saved with --json, measuring nothing")
    options = parser.parse_args()

    if options.from_json:
        data = json.loads(pathlib.Path(options.from_json).read_text())
        print(f"measurements: {options.from_json}")
        for line in data.get("header", []):
            print(line)
        print()
        render(data)
        return
    bc.wait_for_kiln(options.kiln)
    private = tempfile.TemporaryDirectory(prefix="kiln-bench-bin-")
    options.kiln = bc.snapshot(options.kiln, private.name)
    version = bc.wait_for_kiln(options.kiln)
    python = None if options.no_numba else bc.require_bench_python()
    examples = options.examples.split(",") if options.examples else all_examples()
    header = [f"command: {bc.command_line()}",
              f"machine: {bc.machine_line(version)}; load average {bc.load_average()} at start",
              f"repeats: {options.repeats} (medians below), after {options.warmups} warm-up round(s)"]
    print("\n".join(header))

    kiln = {e: [] for e in examples}
    numba = {e: [] for e in examples}
    specs = {}
    curand = []
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as work:
        for _ in range(options.warmups):  # page cache, ptxas and Python's byte code: not what is measured
            kiln_runs(options.kiln, bc.ROOT / "examples" / f"{examples[0]}.py", pathlib.Path(work) / "warm-up")
            if python:
                numba_run(python, examples[0])
        for repeat in range(options.repeats):
            for example in examples:
                runs, count = kiln_runs(options.kiln, bc.ROOT / "examples" / f"{example}.py",
                                        pathlib.Path(work) / example)
                specs[example] = count
                kiln[example].append(runs)
                if python:
                    result = numba_run(python, example)
                    if result["specializations"] != count:
                        raise SystemExit(f"{example}: Kiln built {count} specializations, "
                                         f"bench/numba_side.py lists {result['specializations']}")
                    numba[example].append(result)
                print(f"  repeat {repeat + 1}/{options.repeats}: {example} done", file=sys.stderr)
            if not options.no_curand and CURAND.exists():
                out = pathlib.Path(work) / "curand"
                j1, _ = bc.timed_run([options.kiln, "build", str(CURAND), "--emit", "fatbin", "-o", str(out), "-j", "1",
                                      "--no-cache"])
                jn, _ = bc.timed_run([options.kiln, "build", str(CURAND), "--emit", "fatbin", "-o", str(out),
                                      "--no-cache"])
                curand.append({"fatbin_j1": j1, "fatbin_jN": jn,
                               "specs": specializations_built(out, CURAND)})

    header.append(f"load average {bc.load_average()} at end")
    print(header[-1] + "\n")
    data = {"header": header, "repeats": options.repeats, "warmups": options.warmups, "examples": examples, "kiln": kiln, "numba": numba, "specs": specs,
            "curand": curand, "have_numba": python is not None}
    bc.write_json(options.json, data)
    render(data)


def render(data):
    examples, kiln, numba, specs, curand = (data[k] for k in ("examples", "kiln", "numba", "specs", "curand"))
    have_numba = data["have_numba"]

    def km(example, key):
        return bc.median([r[key] for r in kiln[example]])

    def nm(example, key):
        return bc.median([r[key] for r in numba[example]])

    def n_import(r):
        return r["import_numba_s"] + r["import_example_s"]

    def nm_import(example):
        return bc.median([n_import(r) for r in numba[example]])

    # Table 1: the full default architecture list.
    rows = []
    totals = {"specs": 0, "k1": 0.0, "kN": 0.0, "n": 0.0, "np": 0.0, "ptxas": 0.0}
    for e in examples:
        n = specs[e] * CUBIN_ARCHS
        k1, kN = km(e, "fatbin_j1"), km(e, "fatbin_jN")
        have = bool(numba[e])
        ntotal = nm(e, "total_s") if have else float("nan")
        nproc = nm(e, "process_s") if have else float("nan")
        nptxas = nm(e, "ptxas_s") if have else float("nan")
        totals["specs"] += specs[e]
        totals["k1"] += k1
        totals["kN"] += kN
        if have:
            totals["n"] += ntotal
            totals["np"] += nproc
            totals["ptxas"] += nptxas
        rows.append([e, specs[e], bc.ms(k1), bc.ms(kN), bc.ms(ntotal), bc.ms(nproc),
                     bc.ms(k1 / n, 1), bc.ms(kN / n, 1), bc.ms(ntotal / n, 1), bc.ms(nproc / n, 1),
                     bc.ratio(ntotal, k1), bc.ratio(nproc, k1)])
    n = totals["specs"] * CUBIN_ARCHS
    rows.append(["**all**", totals["specs"], bc.ms(totals["k1"]), bc.ms(totals["kN"]),
                 bc.ms(totals["n"]) if have_numba else "-", bc.ms(totals["np"]) if have_numba else "-",
                 bc.ms(totals["k1"] / n, 1), bc.ms(totals["kN"] / n, 1),
                 bc.ms(totals["n"] / n, 1) if have_numba else "-", bc.ms(totals["np"] / n, 1) if have_numba else "-",
                 bc.ratio(totals["n"], totals["k1"]) if have_numba else "-",
                 bc.ratio(totals["np"], totals["k1"]) if have_numba else "-"])
    print("Full build, 7 cubins + compute_90 PTX, per example (fresh process each):\n")
    print(bc.table(["example", "specs", "Kiln -j1", "Kiln -jN", "Numba excl. import", "Numba process",
                    "Kiln -j1 /spec·arch", "Kiln -jN /spec·arch", "Numba excl. import /spec·arch",
                    "Numba process /spec·arch", "Numba excl. import ÷ Kiln -j1", "Numba process ÷ Kiln -j1"],
                   rows))
    if have_numba:
        print(f"\nptxas share of Numba's time (import excluded): {totals['ptxas'] / totals['n'] * 100:.0f}% "
              f"({bc.ms(totals['ptxas'])} of {bc.ms(totals['n'])})")

    # Table 2: cold, the first cubins of each example.
    rows = []
    cold_totals = [0.0, 0.0, 0.0]
    for e in examples:
        have = bool(numba[e])
        cold_k = km(e, "cold_sm75")
        first = nm(e, "first_spec_first_arch_s") if have else float("nan")
        allspecs = nm(e, "first_arch_all_specs_s") if have else float("nan")
        imp = nm_import(e) if have else float("nan")
        with_import = bc.median([n_import(r) + r["first_arch_all_specs_s"] for r in numba[e]]) if have else float("nan")
        rows.append([e, specs[e], bc.ms(cold_k), bc.ms(imp), bc.ms(first), bc.ms(allspecs), bc.ms(with_import),
                     bc.ratio(allspecs, cold_k), bc.ratio(with_import, cold_k)])
        cold_totals = [a + b for a, b in zip(cold_totals, (cold_k, allspecs, with_import))]
    if have_numba:
        k, a, w = cold_totals
        rows.append(["**all**", totals["specs"], bc.ms(k), "-", "-", bc.ms(a), bc.ms(w), bc.ratio(a, k), bc.ratio(w, k)])
    print("\nCold: a fresh process's first cubins, every specialization for sm_75 only:\n")
    print(bc.table(["example", "specs", "Kiln (process)", "Numba import", "Numba 1st spec",
                    "Numba all specs excl. import", "Numba all specs incl. import",
                    "excl. import ÷ Kiln", "incl. import ÷ Kiln"], rows))

    # Table 3: the compilers alone, no ptxas.
    if have_numba:
        rows = []
        tk = tn = 0.0
        for e in examples:
            n = specs[e] * PTX_TARGETS
            kp = km(e, "ptx_j1")
            np_ = nm(e, "compile_ptx_s")
            tk += kp
            tn += np_
            rows.append([e, specs[e], bc.ms(kp), bc.ms(np_), bc.ms(kp / n, 1), bc.ms(np_ / n, 1), bc.ratio(np_, kp)])
        n = totals["specs"] * PTX_TARGETS
        rows.append(["**all**", totals["specs"], bc.ms(tk), bc.ms(tn), bc.ms(tk / n, 1), bc.ms(tn / n, 1), bc.ratio(tn, tk)])
        print("\nPTX only (no ptxas), 5 PTX targets: `kiln build --emit ptx -j 1` (process) vs compile_ptx (import excluded):\n")
        print(bc.table(["example", "specs", "Kiln", "Numba compile_ptx", "Kiln /spec·target",
                        "Numba /spec·target", "Numba ÷ Kiln"], rows))
        refused = sorted({msg for e in examples for r in numba[e] for msg in r["refused"]})
        print("\ncompile_ptx refused: " + ("; ".join(refused) if refused else "nothing (every arch compiled)"))

    if curand:
        c = curand[0]["specs"]
        j1 = bc.median([r["fatbin_j1"] for r in curand])
        jn = bc.median([r["fatbin_jN"] for r in curand])
        print(f"\ncurand_interop (Kiln only; nvcc compiles the .cu for each arch, nvJitLink links): "
              f"{c} specs, -j1 {bc.ms(j1)} ({bc.ms(j1 / (c * CUBIN_ARCHS), 1)} /spec·arch), "
              f"-jN {bc.ms(jn)} ({bc.ms(jn / (c * CUBIN_ARCHS), 1)} /spec·arch)")



if __name__ == "__main__":
    main()
