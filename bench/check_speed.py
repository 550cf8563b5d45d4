"""How long `kiln check` takes on a 2,000-line kernel module.

Builds a module of at least 2,000 lines from copies of every example (each
copy's kernels, device functions and constants renamed, so that all are
distinct and all are type-checked), then times `kiln check` on it.

    .venv/bin/python bench/check_speed.py [--lines 2000] [--repeats 30] [--kiln build/driver/kiln]
                                          [--memory] [--json FILE]

Prints a Markdown table row and writes the generated module to
bench/out/check_speed_module.py for inspection.

--memory also measures the peak memory (maximum resident set size, from
`/usr/bin/time -v`) of `kiln build EXAMPLE --emit fatbin` on the largest
example (the most kernel specializations; default architectures, -j 1, no
cache) and, next to it, of Numba compiling the same example for the same
architectures (`bench/numba_side.py compile EXAMPLE` in bench/.venv:
compile_ptx for five PTX targets, ptxas for seven cubins). The maximum RSS
is that of the largest single process of the tree (the driver or one
ptxas), as getrusage reports it.
"""

import argparse
import json
import pathlib
import re
import statistics
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
LARGEST_EXAMPLE = "reductions"  # 8 specializations: the most of examples/*.py


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
    parser.add_argument("--memory", action="store_true", help="also the peak memory of `kiln build` and Numba")
    parser.add_argument("--memory-repeats", type=int, default=3)
    parser.add_argument("--example", default=LARGEST_EXAMPLE, help="the example --memory builds")
    parser.add_argument("--json", help="also write the raw measurements here")
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
    result = {"lines": lines, "kernels": kernels, "repeats": options.repeats, "warmups": options.warmups,
              "check_ms": times}
    if options.memory:
        result["memory"] = memory_peaks(options)
        for side, values in result["memory"]["max_rss_kib"].items():
            print(f"| peak memory, {side}, {options.example} | {min(values) / 1024:.0f} MiB | "
                  f"{statistics.median(values) / 1024:.0f} MiB | {max(values) / 1024:.0f} MiB | {len(values)} |")
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps(result, indent=1))


def max_rss_kib(command, env=None, stdout=None):
    """Maximum resident set size of a command, in KiB, from /usr/bin/time -v;
    the command's output goes to the file `stdout` when one is given."""
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=env)
    if stdout is not None:
        pathlib.Path(stdout).write_text(done.stdout)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-4000:]}")
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return int(found.group(1))


def memory_peaks(options):
    import sys
    import tempfile

    sys.path.insert(0, str(ROOT / "bench"))
    import bench_common as bc

    example = str(ROOT / "examples" / f"{options.example}.py")
    peaks = {"kiln build": [], "Numba compile_ptx + ptxas": []}
    with tempfile.TemporaryDirectory(prefix="kiln-bench-memory-") as out:
        kiln = [options.kiln, "build", example, "--emit", "fatbin", "-o", out, "-j", "1", "--no-cache"]
        numba = [bc.require_bench_python(), str(ROOT / "bench" / "numba_side.py"), "compile", options.example]
        for _ in range(options.memory_repeats):
            peaks["kiln build"].append(max_rss_kib(kiln, bc.bench_env()))
            peaks["Numba compile_ptx + ptxas"].append(max_rss_kib(numba, bc.bench_env()))
    return {"example": options.example, "kiln_command": f"kiln build examples/{options.example}.py --emit fatbin "
            "-o TMP -j 1 --no-cache", "max_rss_kib": peaks}


if __name__ == "__main__":
    main()
