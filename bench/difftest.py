"""A differential testing campaign: random kernels, Kiln against Numba.

    .venv/bin/python bench/difftest.py --generator launch --seed 1 --count 10000 --jobs 2
    .venv/bin/python bench/difftest.py --generator datetime --seed 1 --count 1000 --jobs 2
    .venv/bin/python bench/difftest.py --seed 1 --count 10000 --jobs 2
    .venv/bin/python bench/difftest.py --seed 1 --count 200 --reduce --out findings/
    .venv/bin/python bench/difftest.py --seed 1 --count 300 --only barriers
    .venv/bin/python bench/difftest.py --seed 1 --count 300 --only runs

Generates COUNT programs from consecutive seeds, judges them in batches on
Kiln's CPU engine, on the engine's reference mode (none of its fast
paths), on Numba's simulator and on Numba's compiled semantics
(tests/differential/oracles.py), and prints how many matched, how many the
simulator could not judge, and every finding by class with its seed.

Three generators: `random` (tests/differential/programs.py: control flow,
arithmetic over every width, local arrays, device functions, barriers,
warp collectives and atomics) and `launch` (tests/differential/
launch_programs.py: every launch index intrinsic and form, as index, value
and in arithmetic, into arrays of every dtype and layout, records, tuples,
device functions, guards, 1-3-D launches), whose coverage table (launch
index x dtype x layout x form) every campaign of it prints, and `datetime`
(tests/differential/datetime_programs.py: every datetime64 and timedelta64
operation Numba types, over units that meet through the calendar, with
NaT, NaN and zero divisors among the values).

With --reduce, each finding of the random generator is shrunk to a minimal
program and written to OUT as a regression test (a kernel and its njit
reference). Every finding re-runs alone with `--seed S --count 1`. With
--only barriers, the campaign takes, from consecutive seeds, only programs
whose kernel waits at block barriers and at no warp collective: those the
CPU engine runs region by region rather than as fibers; with --only runs,
those whose blocks it runs a grid row at a time (several blocks, and no
barriers, atomics, prints or shared memory).
"""

import argparse
import collections
import importlib
import multiprocessing
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "differential"))

import oracles  # noqa: E402
import programs  # noqa: E402
import reduce  # noqa: E402

GENERATORS = {"random": "programs", "launch": "launch_programs", "datetime": "datetime_programs"}


WARP_COLLECTIVES = ("cuda.syncwarp", "cuda.shfl", "cuda.ballot_sync")


def waits_only_at_block_barriers(program):
    source = program.render("k")
    return "cuda.syncthreads" in source and not any(name in source for name in WARP_COLLECTIVES)


def takes_runs_of_blocks(program):
    """Whether the CPU engine runs the kernel's blocks a grid row at a time:
    more than one block, no barriers, atomics, prints or shared memory."""
    source = program.render("k")
    keeps_blocks_apart = ("cuda.syncthreads", "cuda.atomic", "print(", "cuda.shared", *WARP_COLLECTIVES)
    return program.blocks != 1 and not any(name in source for name in keeps_blocks_apart)


CHOICES = {
    "barriers": (waits_only_at_block_barriers, "wait only at block barriers"),
    "runs": (takes_runs_of_blocks, "run as runs of blocks"),
}


def chosen_seeds(first, count, only):
    if only is None:
        return list(range(first, first + count))
    chosen, _ = CHOICES[only]
    seeds = []
    seed = first
    while len(seeds) < count:
        if chosen(programs.generate(seed)):
            seeds.append(seed)
        seed += 1
    return seeds


def judge_batch(seeds):
    batch = [GENERATOR.generate(seed) for seed in seeds]
    coverage = collections.Counter(cell for program in batch for cell in program.coverage())
    return oracles.judge(batch, confirm_matches=CONFIRM), coverage


CONFIRM = False
GENERATOR = programs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1, help="the first seed")
    parser.add_argument("--count", type=int, default=1000, help="how many programs")
    parser.add_argument("--jobs", type=int, default=2, help="batches judged in parallel")
    parser.add_argument("--batch", type=int, default=40, help="programs per Kiln module")
    parser.add_argument("--confirm-matches", action="store_true",
                        help="also run njit where Kiln and the simulator agree")
    parser.add_argument("--reduce", action="store_true", help="shrink each finding to a minimal program")
    parser.add_argument("--out", default="difftest-findings", help="where reduced findings go")
    parser.add_argument("--generator", choices=list(GENERATORS), default="random",
                        help="random: control flow and arithmetic; launch: launch indices into every dtype "
                             "and layout; datetime: datetime64 and timedelta64 arithmetic")
    parser.add_argument("--only", choices=list(CHOICES),
                        help="barriers: only programs that wait at block barriers and at no warp collective; "
                             "runs: only programs whose blocks the CPU engine runs a grid row at a time "
                             "(random generator)")
    arguments = parser.parse_args()
    if arguments.generator != "random" and (arguments.only or arguments.reduce):
        parser.error("--only and --reduce take programs of the random generator")
    _configure(arguments.confirm_matches, GENERATORS[arguments.generator])

    seeds = chosen_seeds(arguments.seed, arguments.count, arguments.only)
    if arguments.only:
        print(f"{len(seeds)} programs that {CHOICES[arguments.only][1]} among seeds {seeds[0]}-{seeds[-1]}",
              flush=True)
    batches = [seeds[i:i + arguments.batch] for i in range(0, len(seeds), arguments.batch)]
    started = time.monotonic()
    outcomes = []
    coverage = collections.Counter()
    with multiprocessing.Pool(arguments.jobs, initializer=_configure,
                              initargs=(CONFIRM, GENERATORS[arguments.generator])) as pool:
        for done, (batch, covered) in enumerate(pool.imap_unordered(judge_batch, batches), 1):
            outcomes.extend(batch)
            coverage.update(covered)
            for outcome in batch:
                if outcome.verdict in oracles.FINDINGS:
                    print(f"  seed {outcome.seed}: {outcome.verdict}: {outcome.detail[:300]}", flush=True)
            findings = sum(o.verdict in oracles.FINDINGS for o in outcomes)
            print(f"[{done}/{len(batches)}] {len(outcomes)} programs, {findings} findings, "
                  f"{time.monotonic() - started:.0f} s", flush=True)
    elapsed = time.monotonic() - started

    counts = collections.Counter(o.verdict for o in outcomes)
    print(f"\n{len(outcomes)} programs from seed {arguments.seed} in {elapsed:.0f} s "
          f"({len(outcomes) / elapsed:.1f} programs/s, {arguments.jobs} jobs)")
    for verdict in [oracles.MATCH, oracles.SIMULATOR_DIVERGENCE, oracles.INVALID, *oracles.FINDINGS]:
        print(f"  {verdict}: {counts.get(verdict, 0)}")
    divergences = collections.Counter(divergence_kind(o.detail) for o in outcomes
                                      if o.verdict == oracles.SIMULATOR_DIVERGENCE)
    if divergences:
        print("  simulator divergences by kind: " + ", ".join(f"{k} {n}" for k, n in divergences.most_common()))
    if hasattr(GENERATOR, "coverage_report"):
        print("\nCoverage (launch index x dtype x layout x form):\n" + GENERATOR.coverage_report(coverage))
    findings = sorted((o for o in outcomes if o.verdict in oracles.FINDINGS), key=lambda o: o.seed)
    for outcome in findings:
        print(f"\nseed {outcome.seed}: {outcome.verdict}\n  {outcome.detail[:1000]}")
        if arguments.reduce:
            small = reduce.reduce(programs.generate(outcome.seed), outcome.verdict)
            reduce.write_regression(small, arguments.out, f"seed_{outcome.seed}")
            print(small.render(f"k{outcome.seed}"))
    return 1 if findings else 0


def divergence_kind(detail):
    """How the simulator diverged: the exception it raised, or values."""
    return "values" if " differs at " in detail else detail.split(":")[0]


def _configure(confirm, generator):
    global CONFIRM, GENERATOR
    CONFIRM = confirm
    GENERATOR = importlib.import_module(generator)


if __name__ == "__main__":
    sys.exit(main())
