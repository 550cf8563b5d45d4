"""What the compiler's wheel costs at every start: the kiln command of an
installed kiln-compiler wheel, which loads the shared compiler library (LLVM
once, for the command and kiln._compiler; every other dependency linked in),
against a kiln that carries LLVM itself, linked at a fixed address, as the
wheel linked it before and as build/ links it (build/'s also loads Debian's
shared SQLite, libcrypto, libarchive and what they need).

    scripts/build-wheel.sh --out dist
    python3 bench/wheel_startup.py --wheel dist/kiln_compiler-*.whl
                                   [--against build/driver/kiln] [--repeats 200]

The wheel is installed into a fresh virtual environment (NumPy from
.venv/wheelhouse). Each kiln is copied and stripped of debug information,
as an installed one is, so that both read the same amount from disk. Timed,
in fresh processes, alternating between the two:

* `kiln --version`: process start, the dynamic loader's work (for the
  wheel, loading libkiln-compiler.so and applying its relocations) and
  LLVM's start-up, nothing else.
* `kiln build kernels.py --module kernels` of a one-kernel module whose
  specialization the cache already holds (a warm build, what every build
  step of a CMake or setuptools project that did not change costs).

Reported: median and fastest of --repeats runs, and the difference of the
medians.
"""

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402

KERNELS = """\
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def scale(values, out):
    i = cuda.grid(1)
    if i < values.size:
        out[i] = values[i] * 2
"""


def install(wheel, folder):
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-index",
                    "--find-links", bc.ROOT / ".venv" / "wheelhouse", wheel], check=True)
    return venv / "bin" / "kiln"


def stripped_copy(kiln, folder):
    copy = folder / "kiln-static"
    shutil.copy2(kiln, copy)
    subprocess.run(["strip", "--strip-debug", copy], check=True)
    return copy


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", required=True, type=pathlib.Path)
    parser.add_argument("--against", type=pathlib.Path, default=pathlib.Path(bc.default_kiln()))
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kiln-wheel-startup-") as scratch:
        scratch = pathlib.Path(scratch)
        kilns = {
            "wheel (shared compiler library)": install(args.wheel.resolve(), scratch),
            "build/'s: LLVM linked in, Debian's libraries": stripped_copy(args.against, scratch),
        }
        project = scratch / "project"
        project.mkdir()
        (project / "kernels.py").write_text(KERNELS)
        env = bc.bench_env(KILN_CACHE_DIR=str(scratch / "cache"))
        commands = {
            "kiln --version": lambda kiln: [kiln, "--version"],
            "warm kiln build --module": lambda kiln: [kiln, "build", "kernels.py", "--module",
                                                      "kernels", "-o", "out"],
        }
        for kiln in kilns.values():
            bc.timed_run(commands["warm kiln build --module"](kiln), env=env, cwd=project)
        times = {(name, label): [] for name in commands for label in kilns}
        for _ in range(args.repeats):
            for name, command in commands.items():
                for label, kiln in kilns.items():
                    elapsed, _ = bc.timed_run(command(kiln), env=env, cwd=project)
                    times[(name, label)].append(elapsed)

    print(f"`{bc.command_line()}`\n")
    print(f"{bc.machine_line()}; load {bc.load_average()}; {args.repeats} runs each\n")
    rows = []
    for name in commands:
        medians = {}
        for label in kilns:
            values = times[(name, label)]
            medians[label] = bc.median(values)
            rows.append([name, label, bc.ms(medians[label], 2), bc.ms(min(values), 2)])
        wheel, static = medians.values()
        rows.append([name, "difference", bc.ms(wheel - static, 2), ""])
    print(bc.table(["command", "kiln", "median", "fastest"], rows, "llrr"))


if __name__ == "__main__":
    main()
