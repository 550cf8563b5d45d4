"""How long `kiln check` takes on a 2,000-line kernel module.

Builds a module of at least 2,000 lines from copies of every example (each
copy's kernels, device functions and constants renamed, so that all are
distinct and all are type-checked), then times `kiln check` on it.

    .venv/bin/python bench/check_speed.py [--lines 2000] [--repeats 30] [--kiln build/driver/kiln]

Prints a Markdown table row and writes the generated module to
bench/out/check_speed_module.py for inspection.
"""

import argparse
import pathlib
import re
import statistics
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def definitions(source):
    """Names a module defines at top level: functions and constants."""
    names = re.findall(r"^def (\w+)", source, flags=re.M)
    names += re.findall(r"^([A-Z_][A-Z0-9_]*) =", source, flags=re.M)
    return names


def body_without_imports(source):
    lines = [line for line in source.splitlines()
             if not line.startswith(("import ", "from "))]
    return "\n".join(lines)


def build_module(target_lines):
    examples = sorted((ROOT / "examples").glob("*.py"))
    imports = set()
    bodies = []
    for path in examples:
        source = path.read_text()
        imports.update(line for line in source.splitlines()
                       if line.startswith(("import ", "from ")))
        bodies.append((source, definitions(source)))
    header = "\n".join(sorted(imports)) + "\n\n"
    parts = [header]
    count = header.count("\n")
    copy = 0
    while count < target_lines:
        for source, names in bodies:
            body = body_without_imports(source)
            for name in sorted(names, key=len, reverse=True):
                body = re.sub(rf"\b{name}\b", f"{name}_{copy}", body)
            parts.append(body + "\n\n")
            count += body.count("\n") + 2
        copy += 1
    return "".join(parts), count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmups", type=int, default=3)
    parser.add_argument("--kiln", default=str(ROOT / "build" / "driver" / "kiln"))
    options = parser.parse_args()

    source, lines = build_module(options.lines)
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    module = out / "check_speed_module.py"
    module.write_text(source)

    command = [options.kiln, "check", str(module)]
    first = subprocess.run(command, capture_output=True, text=True)
    if first.returncode != 0:
        raise SystemExit(f"kiln check failed on the generated module:\n{first.stderr[:4000]}")
    kernels = first.stdout.count("\n  kernel ")

    for _ in range(options.warmups):
        subprocess.run(command, capture_output=True, check=True)
    times = []
    for _ in range(options.repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    print(f"| kiln check, {lines}-line module ({kernels} kernels) | "
          f"{min(times):.1f} ms | {statistics.median(times):.1f} ms | {max(times):.1f} ms | "
          f"{options.repeats} |")


if __name__ == "__main__":
    main()
