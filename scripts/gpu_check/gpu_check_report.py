"""Writes the results section of docs/gpu.md from a gpu-check.json that
scripts/gpu-check.sh wrote (on a GPU machine, or --dry-run here).

    python3 scripts/gpu_check/gpu_check_report.py gpu-check.json [--doc docs/gpu.md]

Without --doc it prints the section; with it, it replaces what lies between
the doc's results markers.
"""

import argparse
import json
import pathlib
import sys

BEGIN = "<!-- gpu-check results: written by scripts/gpu_check/gpu_check_report.py -->"
END = "<!-- end of gpu-check results -->"


def verdict(failed):
    """A run's outcome in words, from its list of failed checks."""
    return f"failed: {', '.join(failed)}" if failed else "every check passed"


def section(results):
    device = results.get("device", {})
    bundle = results.get("bundle", {})
    stand_in = device.get("name", "").startswith("Kiln stand-in driver")
    lines = [BEGIN, ""]
    where = ("a dry run: the stand-in driver and the CPU engine, no GPU" if stand_in
             else f"{device.get('name', '?')}, compute capability "
                  f"{'.'.join(map(str, device.get('compute_capability', ['?'])))}, "
                  f"driver of CUDA {device.get('driver_cuda_version', '?')}")
    machine, runtime = results["machine"], results.get("runtime", {})
    lines.append(f"Run of {results.get('date', '?')} on {where}; Python {machine.get('python')}, "
                 f"NumPy {machine.get('numpy')}; built by {bundle.get('kiln', '?')}; "
                 f"{verdict(results.get('failed'))} ({results.get('seconds', '?')} s).")
    lines.append("")
    lines.append("| check | result |")
    lines.append("| --- | --- |")
    lines.append("| the kiln-runtime wheel installs | "
                 f"{runtime.get('wheel') or runtime.get('error')} |")
    examples = results.get("examples", {})
    lines.append("| every example against NumPy | "
                 f"{examples.get('summary') or examples.get('error')} |")
    for variant, outcome in results.get("choice", {}).items():
        if isinstance(outcome, dict):
            judged = "as expected" if outcome["as_expected"] else f"expected {outcome['expected']}"
            lines.append(f"| image choice, {variant} | {outcome['said'][:120]} ({judged}) |")
    programs = results.get("programs", {})
    if "counts" in programs:
        counts = programs["counts"]
        lines.append(f"| differential tester programs against the CPU engine's outputs | "
                     f"{counts['match']} match, {counts['mismatch']} differ, "
                     f"{counts['error']} failed, {counts['missing']} missing |")
    else:
        lines.append(f"| differential tester programs | {programs.get('error')} |")
    lines += host_api_rows(results.get("host_api", {}))
    lines += side_by_side_tables(results.get("side_by_side"))
    lines += ["", END]
    return "\n".join(lines)


def host_api_rows(host_api):
    if "checks" not in host_api:
        return [f"| kiln.cuda's host API | {host_api.get('error')} |"]
    rows = []
    for name, outcome in host_api["checks"].items():
        said = outcome.get("message") or outcome.get("reason") or ", ".join(
            f"{key} {value}" for key, value in outcome.get("details", {}).items())
        result = outcome["status"] + (f": {said[:200]}" if said else "")
        rows.append(f"| host API: {name.replace('_', ' ')} | {result.replace('|', '/')} |")
    return rows


def side_by_side_tables(result):
    """Kiln against numba-cuda: first calls and launch overhead, then each
    kernel's time, registers and occupancy, then what went wrong."""
    if result is None:
        return []
    if "error" in result:
        return ["", f"Kiln against numba-cuda: {result['error']}"]
    kiln, numba = result["kiln"], result["numba"]
    kiln_title = "Kiln" if kiln.get("target") == "cuda" else "Kiln (CPU engine)"
    sides = ((kiln_title, kiln), ("numba-cuda", numba))
    skipped = f"; numba-cuda: {numba['skipped']}" if "skipped" in numba else ""
    lines = ["", "Kiln against numba-cuda, the same kernels (scripts/gpu_check/kernels/side_by_side.py) "
                 f"on the same device{skipped}:", "",
             "| | " + " | ".join(title for title, _ in sides) + " |", "| --- | --- | --- |"]

    def row(label, read, form):
        return f"| {label} | " + " | ".join(figure(side, read, form) for _, side in sides) + " |"

    for phase, label in (("cold", "first call, cold: process start to the first launch finished"),
                         ("warm", "first call, warm: the same in a second process")):
        lines.append(row(label, lambda found: found["first_call"][phase]["first_call_s"], "{:.3g} s"))
    lines.append(row("launch overhead: median of 1,000 back-to-back launches of an empty kernel",
                     lambda found: found["launch_overhead_us"], "{:.3g} µs"))
    lines += ["", "| kernel | timed at | " + " | ".join(f"{title}, ms" for title, _ in sides) +
              " | registers | occupancy |", "| --- | --- | --- | --- | --- | --- |"]
    for name in result["kernels"]:
        cells = [kernel_cells(side, name) for _, side in sides]
        timed = kiln.get("kernels", {}).get(name, {}).get("timed_shape")
        shape = " x ".join(f"{extent:,}" for extent in timed) if timed else "—"
        lines.append(f"| {name} | {shape} | " + " | ".join(cell["time"] for cell in cells) + " | " +
                     " | ".join(" / ".join(cell[key] for cell in cells) for key in ("registers", "occupancy"))
                     + " |")
    architectures = sorted({figures["resources_of"] for figures in kiln.get("kernels", {}).values()
                            if "resources_of" in figures})
    lines += ["", "Kernel times: the median of CUDA-event-timed runs (kiln.cuda.event, numba.cuda.event), "
                  "each kernel checked against NumPy first. Registers and occupancy: Kiln / numba-cuda; "
                  f"Kiln's registers are what ptxas reported for {', '.join(architectures) or 'the device'} "
                  "when it built the module (its manifest), numba-cuda's what the driver reports; "
                  "occupancy: resident warps per multiprocessor over the most it holds, from "
                  f"{result.get('occupancy_method')}."]
    errors = [f"- {title}: {error}" for title, side in sides for error in side_errors(side)]
    return lines + ([""] + errors if errors else [])


def side_errors(side):
    """What went wrong on one side of the comparison, in words."""
    errors = [f"first call, {phase}: {outcome['error']}"
              for phase, outcome in side.get("first_call", {}).items() if "error" in outcome]
    errors += [side[key] for key in ("error", "launch_overhead_error") if key in side]
    errors += [f"{name}: {figures['error']}" for name, figures in side.get("kernels", {}).items()
               if "error" in figures]
    return [error.replace("\n", " ")[:300] for error in errors]


def kernel_cells(side, name):
    """One side's time, registers and occupancy of kernel `name`, in words."""
    if "skipped" in side:
        return dict.fromkeys(("time", "registers", "occupancy"), "skipped")
    figures = side.get("kernels", {}).get(name, {})
    time = f"{figures['kernel_ms']:.3g}" if "kernel_ms" in figures else "—"
    if figures.get("matches_numpy") is False:
        time += " (differs from NumPy)"
    occupancy = (f"{figures['occupancy']:.0%} ({figures['blocks_per_multiprocessor']} blocks)"
                 if "occupancy" in figures else "—")
    registers = figures.get("registers")
    return {"time": time, "registers": "—" if registers is None else str(registers), "occupancy": occupancy}


def figure(side, read, form):
    """One side's figure, formatted; "skipped", or "—" where there is none."""
    if "skipped" in side:
        return "skipped"
    try:
        value = read(side)
    except (KeyError, TypeError):
        return "—"
    return "—" if value is None else form.format(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=pathlib.Path)
    parser.add_argument("--doc", type=pathlib.Path)
    args = parser.parse_args()
    text = section(json.loads(args.results.read_text()))
    if not args.doc:
        print(text)
        return 0
    doc = args.doc.read_text()
    if BEGIN not in doc or END not in doc:
        print(f"gpu_check_report.py: {args.doc} has no results markers ({BEGIN} ... {END})", file=sys.stderr)
        return 1
    before, rest = doc.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    args.doc.write_text(before + text + after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
