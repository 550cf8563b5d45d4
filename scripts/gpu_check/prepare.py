"""Builds, on this machine, everything the device check needs on a GPU
machine that has no Kiln compiler: the bundle scripts/gpu-check.sh carries
there (see its --help).

    python3 scripts/gpu_check/prepare.py BUNDLE [--programs N] [--seed S]
                                         [--runtime-wheel WHEEL]

BUNDLE receives:

  wheels/            the kiln-runtime wheel (scripts/build-wheel.sh --runtime:
                     manylinux_2_28, one wheel for CPython 3.11 and later)
  modules/<name>/    every example of examples/ built with `kiln build
                     --module` for sm_80 and sm_90 cubins and compute_90 PTX
                     (the runtime's tests import them from here)
  choice/<variant>/  vector_add built as one kind of image only: 80-real,
                     90-real and 90-virtual (PTX), to see which the driver
                     takes on the GPU at hand
  kernels/<name>/    the device check's own kernel modules
                     (scripts/gpu_check/kernels/: host_api_kernels for the
                     host API step, side_by_side for Kiln against
                     numba-cuda), built as the examples are
  programs/          N programs of the differential tester
                     (tests/differential/programs.py) from seed S, built in
                     batches of 50 (less the few Kiln refuses, as Numba
                     does) for sm_90 (the H200's), with the outputs Kiln's
                     CPU engine gives here (references.json: a digest per
                     output array), which the GPU must reproduce
  manifest.json      what was built, by which kiln, and the bundle's bytes
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECK_KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"
sys.path.insert(0, str(ROOT / "tests" / "differential"))

import oracles  # noqa: E402
import programs as generator  # noqa: E402
from program_runs import run_programs  # noqa: E402

MODULE_ARCHS = "80-real;90"
# The programs are most of the bundle's bytes: they carry the sm_90 cubin
# alone, for the H200 the device tool lends (their outputs come from the
# CPU engine here, and a dry run runs them there too).
PROGRAM_ARCHS = "90-real"
CHOICE_VARIANTS = {"cubin_sm80": "80-real", "cubin_sm90": "90-real", "ptx_compute90": "90-virtual"}
BATCH = 50


def run(command, **options):
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                          **options)
    if done.returncode != 0:
        sys.exit(f"gpu-check prepare: {' '.join(map(str, command))} failed "
                 f"({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return done


def build_module(kiln, source, name, folder, archs, cache, check=True):
    folder.mkdir(parents=True, exist_ok=True)
    command = [kiln, "build", source, "--module", name, "-o", folder, "--arch", archs, "-q",
               "--cache-dir", cache]
    if check:
        return run(command)
    return subprocess.run([str(part) for part in command], capture_output=True, text=True)


def build_programs(kiln, batch, folder, cache):
    """Builds `batch` as modules in `folder`, halving a batch that fails
    until the programs Kiln refuses (as Numba does some the generator
    writes) stand alone, and leaves those out. Yields (module, programs)."""
    name = f"programs_{batch[0].seed}_{len(batch)}"
    source = folder / f"{name}.py"
    source.write_text(oracles.module_source(batch))
    built = build_module(kiln, source, name, folder / name, PROGRAM_ARCHS, cache, check=False)
    source.unlink()
    if built.returncode == 0:
        yield name, batch
    elif len(batch) > 1:
        shutil.rmtree(folder / name, ignore_errors=True)
        half = len(batch) // 2
        yield from build_programs(kiln, batch[:half], folder, cache)
        yield from build_programs(kiln, batch[half:], folder, cache)
    else:
        shutil.rmtree(folder / name, ignore_errors=True)


def reference_outputs(folder, name, seeds, package):
    """The CPU engine's outputs for each seed, as the device side encodes them."""
    env = dict(os.environ, KILN_TARGET="cpu", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join([str(package), os.environ.get("PYTHONPATH", "")]))
    results, done = run_programs(folder, name, seeds, env, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"gpu-check prepare: the CPU engine could not run {name} "
                 f"({done.returncode}):\n{done.stderr[-4000:]}")
    return results


def bundle_bytes(bundle):
    return sum(path.stat().st_size for path in bundle.rglob("*") if path.is_file())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=pathlib.Path)
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runtime-wheel", type=pathlib.Path,
                        help="a kiln-runtime wheel to carry (default: build one)")
    parser.add_argument("--build-dir", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build")))
    args = parser.parse_args()

    kiln = args.build_dir / "driver" / "kiln"
    package = args.build_dir / "python"
    if not os.access(kiln, os.X_OK):
        sys.exit(f"gpu-check prepare: no kiln at {kiln}; run scripts/setup.sh")
    bundle = args.bundle.resolve()
    shutil.rmtree(bundle, ignore_errors=True)
    bundle.mkdir(parents=True)
    cache = bundle.parent / f"{bundle.name}-cache"
    started = time.monotonic()

    wheels = bundle / "wheels"
    wheels.mkdir()
    if args.runtime_wheel:
        shutil.copy2(args.runtime_wheel, wheels)
    else:
        run(["bash", ROOT / "scripts" / "build-wheel.sh", "--runtime", "--out", wheels])

    examples = sorted((ROOT / "examples").glob("*.py"))
    for source in examples:
        build_module(kiln, source, source.stem, bundle / "modules" / source.stem, MODULE_ARCHS,
                     cache)
    for variant, archs in CHOICE_VARIANTS.items():
        build_module(kiln, ROOT / "examples" / "vector_add.py", "vector_add",
                     bundle / "choice" / variant, archs, cache)
    check_kernels = sorted(CHECK_KERNELS.glob("*.py"))
    for source in check_kernels:
        build_module(kiln, source, source.stem, bundle / "kernels" / source.stem, MODULE_ARCHS, cache)

    seeds = list(range(args.seed, args.seed + args.programs))
    references, batches = {}, []
    folder = bundle / "programs"
    folder.mkdir()
    for first in range(0, len(seeds), BATCH):
        batch = [generator.generate(seed) for seed in seeds[first:first + BATCH]]
        for name, built in build_programs(kiln, batch, folder, cache):
            built_seeds = [p.seed for p in built]
            references.update(reference_outputs(folder / name, name, built_seeds, package))
            batches.append({"module": name, "seeds": built_seeds})
    (folder / "references.json").write_text(json.dumps(references))
    kept = sum(len(batch["seeds"]) for batch in batches)

    version = run([kiln, "--version"]).stdout.strip()
    manifest = {
        "kiln": version,
        "examples": [source.stem for source in examples],
        "module_archs": MODULE_ARCHS,
        "program_archs": PROGRAM_ARCHS,
        "choice": CHOICE_VARIANTS,
        "kernels": [source.stem for source in check_kernels],
        "programs": {"generator": "random", "first_seed": args.seed, "count": args.programs,
                     "built": kept, "batches": batches},
        "prepared_in_seconds": round(time.monotonic() - started, 1),
    }
    manifest["bytes"] = bundle_bytes(bundle)
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=1))
    shutil.rmtree(cache, ignore_errors=True)
    print(f"{bundle}: {manifest['bytes']:,} bytes ({len(examples)} examples, {kept} of "
          f"{args.programs} programs in {len(batches)} modules; Kiln refuses the rest)")


if __name__ == "__main__":
    main()
