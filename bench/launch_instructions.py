"""What a launch costs the host, in instructions: comparable between two
builds of kiln._runtime on a machine too busy for timings.

    python3 bench/launch_instructions.py [--calls 10000] [--build-dir build]
                                         [--against OTHER_BUILD_DIR] [--json FILE]

examples/vector_add.py is built once with `kiln build --module` (the build
dir's kiln, Kiln's default architectures, as users build it), then
valgrind's callgrind counts the instructions of the main thread of a Python
process (the benchmark environment's, bench/.venv) that imports it with
KILN_TARGET=cpu from each build's `python/` folder and makes --calls calls
of one statement, and of one that makes none; the difference, divided by
--calls, is what one call costs:

* `launch.prepare(out, x, x)`: a launch up to the kernel (argument types,
  specialization, packed parameters) on three NumPy float32 arrays;
* `kernel[4, 256]`: the launch configuration.

The processes run with PYTHONHASHSEED=0, so that every run of a build
counts the same.

Instruction counts do not depend on the machine's load; they are not
seconds (a cache miss counts one), so they compare builds, not machines.
With --against, the same is counted with the other build's runtime (the
kernel module is the same file), for instance the runtime before a change.
"""

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench_common as bc  # noqa: E402

STATEMENTS = {
    "launch.prepare(out, x, x)": "launch.prepare(out, x, x)",
    "kernel[4, 256]": "kernel[4, 256]",
}

CALLS = """
import sys
import numpy as np
import vector_add

count, statement = int(sys.argv[1]), sys.argv[2]
x = np.arange(1024, dtype=np.float32)
out = np.zeros_like(x)
kernel = vector_add.vector_add
launch = kernel[4, 256]
launch.prepare(out, x, x)
code = compile("for _ in range(count): " + statement, "<calls>", "exec")
exec(code)
"""


def run_environment(package_parent, module_folder):
    """What every run of the script has: the build's package and the module
    importable, the CPU engine, and one hash seed, so that runs count the same."""
    return bc.bench_env(KILN_TARGET="cpu", PYTHONHASHSEED="0",
                        PYTHONPATH=f"{package_parent}:{module_folder}")


def instructions(python, package_parent, module_folder, script, count, statement, scratch):
    """The instructions callgrind counts in the main thread of a run of
    `script` (the CPU engine's workers, which wait by spinning a while,
    count differently from run to run)."""
    out = scratch / "callgrind.out"
    done = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                           f"--callgrind-out-file={out}", python, script, str(count), statement],
                          capture_output=True, text=True, env=run_environment(package_parent,
                                                                              module_folder))
    main_thread = pathlib.Path(f"{out}-01")
    found = main_thread.exists() and re.search(r"^totals: (\d+)", main_thread.read_text(),
                                                re.MULTILINE)
    if done.returncode != 0 or not found:
        raise SystemExit(f"valgrind failed ({done.returncode}):\n{done.stderr[-3000:]}")
    for written in scratch.glob("callgrind.out*"):
        written.unlink()
    return int(found.group(1))


def runtime_copy(build_dir, scratch, name):
    """The build's kiln package without debug information, which
    valgrind's reader may refuse."""
    package = scratch / name
    shutil.copytree(pathlib.Path(build_dir) / "python", package, symlinks=False)
    for extension in (package / "kiln").glob("_*.so"):
        subprocess.run(["strip", "--strip-debug", str(extension)], check=True)
    return package


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--build-dir", default=str(bc.default_build_dir()))
    parser.add_argument("--against", help="another build folder whose runtime to count too")
    parser.add_argument("--json", help="also write the figures to this file")
    options = parser.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    python = bc.require_bench_python()
    kiln = str(pathlib.Path(options.build_dir) / "driver" / "kiln")
    with tempfile.TemporaryDirectory(prefix="kiln-launch-instructions-") as folder:
        scratch = pathlib.Path(folder)
        module_folder = scratch / "module"
        subprocess.run([kiln, "build", str(bc.ROOT / "examples" / "vector_add.py"), "--module",
                        "vector_add", "-o", str(module_folder), "-q"],
                       check=True)
        script = scratch / "calls.py"
        script.write_text(CALLS)
        builds = {"this build": options.build_dir}
        if options.against:
            builds["--against"] = options.against
        figures = {}
        for label, build_dir in builds.items():
            package = runtime_copy(build_dir, scratch, label.replace(" ", "_").strip("-"))
            # One untimed run first: it writes the bytecode of the copied
            # package, which the first counted run would otherwise compile
            # and the next not.
            subprocess.run([python, str(script), "0", "kernel[4, 256]"], check=True,
                           env=run_environment(package, module_folder))
            figures[label] = {}
            for name, statement in STATEMENTS.items():
                none = instructions(python, package, module_folder, script, 0, statement, scratch)
                many = instructions(python, package, module_folder, script, options.calls,
                                    statement, scratch)
                figures[label][name] = round((many - none) / options.calls)
    print(f"Instructions per call (callgrind, {options.calls:,} calls):\n")
    print("| statement | " + " | ".join(figures) + " |")
    print("| --- | " + " | ".join("---:" for _ in figures) + " |")
    for name in STATEMENTS:
        print(f"| `{name}` | " + " | ".join(f"{figures[label][name]:,}" for label in figures) + " |")
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
