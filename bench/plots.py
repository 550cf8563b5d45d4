"""Draws the plots of docs/benchmarks.md from bench/run.py's results.

    bench/.venv/bin/python bench/plots.py RESULTS.json OUTPUT_FOLDER

Run by bench/run.py with the benchmark environment's Python (matplotlib
comes with bench/setup.sh). Writes, for the figures RESULTS holds:

* build_scale.svg: build time of a module against its kernel count, Kiln
  and Numba (figure 2b);
* imports.svg: import time (CPU) and memory growth of a built module
  against its kernel count (figure 3c);
* cpu_throughput.svg: each CPU-engine kernel's speed and that of @njit
  and @njit(parallel=True), relative to NumPy's (figure 6d).

SVG with fixed metadata and hash salt, so that the same numbers give the
same file.
"""

import json
import pathlib
import statistics
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.hashsalt"] = "kiln-benchmarks"
plt.rcParams["svg.fonttype"] = "none"


def save(figure, path):
    figure.tight_layout()
    figure.savefig(path, metadata={"Date": None, "Creator": None})
    plt.close(figure)


def build_scale(data, path):
    sizes = sorted(data["results"], key=int)
    kiln = [statistics.median(data["results"][n]["kiln_s"]) for n in sizes]
    numba = [statistics.median(data["results"][n]["numba_s"]) for n in sizes]
    figure, axes = plt.subplots(figsize=(6, 3.6))
    axes.plot([int(n) for n in sizes], numba, "o-", label="Numba: compile_ptx + ptxas")
    axes.plot([int(n) for n in sizes], kiln, "s-", label="kiln build -j 1")
    axes.set_xlabel("kernels in the module")
    axes.set_ylabel("cold build, seconds")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend()
    save(figure, path)


def imports(data, path):
    runs = {int(count): r for count, r in data["results"].items()}
    counts = sorted(runs)
    cpu_ms = [statistics.median(r["import_cpu_s"] for r in runs[c]) * 1e3 for c in counts]
    rss_mb = [statistics.median(r["rss_bytes"] for r in runs[c]) / 2**20 for c in counts]
    figure, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4))
    left.plot(counts, cpu_ms, "o-")
    left.set_xlabel("kernels in the module")
    left.set_ylabel("import, CPU time (ms)")
    left.set_ylim(bottom=0)
    right.plot(counts, rss_mb, "o-", color="tab:orange")
    right.set_xlabel("kernels in the module")
    right.set_ylabel("RSS growth at import (MB)")
    right.set_ylim(bottom=0)
    for axes in (left, right):
        axes.grid(alpha=0.3)
    save(figure, path)


def cpu_throughput(data, path):
    cases = list(data["results"])
    names = ["Kiln", "njit", "njit parallel"]
    figure, axes = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        speed = [statistics.median(data["results"][case]["times"]["NumPy"]) /
                 statistics.median(data["results"][case]["times"][name]) for case in cases]
        axes.bar([c + (i - (len(names) - 1) / 2) * width for c in range(len(cases))], speed, width, label=name)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_yscale("log")
    axes.set_xticks(range(len(cases)), cases)
    axes.set_ylabel("speed relative to NumPy (log)")
    axes.grid(axis="y", alpha=0.3, which="both")
    axes.legend()
    save(figure, path)


PLOTS = {"scale": ("build_scale.svg", build_scale), "imports": ("imports.svg", imports),
         "throughput": ("cpu_throughput.svg", cpu_throughput)}


def main():
    results, folder = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    for result in json.loads(results.read_text())["results"]:
        if result["name"] in PLOTS and "data" in result:
            name, draw = PLOTS[result["name"]]
            draw(result["data"], folder / name)
            print(folder / name)


if __name__ == "__main__":
    main()
