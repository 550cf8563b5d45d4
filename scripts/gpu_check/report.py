"""Writes the results section of docs/gpu.md from a gpu-check.json that
scripts/gpu-check.sh wrote (on a GPU machine, or --dry-run here).

    python3 scripts/gpu_check/report.py gpu-check.json [--doc docs/gpu.md]

Without --doc it prints the section; with it, it replaces what lies between
the doc's results markers.
"""

import argparse
import json
import pathlib
import sys

BEGIN = "<!-- gpu-check results: written by scripts/gpu_check/report.py -->"
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
    lines += ["", END]
    return "\n".join(lines)


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
        print(f"report.py: {args.doc} has no results markers ({BEGIN} ... {END})", file=sys.stderr)
        return 1
    before, rest = doc.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    args.doc.write_text(before + text + after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
