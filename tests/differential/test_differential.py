"""Random kernels from fixed seeds: Kiln must compute what Numba computes.

Two hundred programs (tests/differential/programs.py) in five batches, each
judged on Kiln's CPU engine and its reference mode (none of the engine's
fast paths), on sm_80 PTX and on Numba's simulator, and against Numba's
compiled semantics wherever the two disagree (tests/differential/
oracles.py); one more batch of forty is confirmed against Numba's compiled
semantics program by program. Two batches of forty take only programs the
CPU engine runs its own ways: those that wait only at block barriers
(region by region) and those whose blocks it runs a grid row at a time. A
batch of forty programs of the launch index generator (launch_programs.py:
launch indices into arrays of every dtype and layout) is confirmed program
by program too. Any mismatch (with Numba, or between the engine and its
reference mode), compile error, internal error, crash, hang or lost store
fails the batch, with the seed, the program and what differed;
`bench/difftest.py --seed S --count 1 --reduce` shrinks a finding of the
first generator to a regression test. Long campaigns:
`bench/difftest.py --count 10000` and `bench/difftest.py --generator launch
--count 10000`.
"""

import os
import pathlib
import re
import subprocess
import sys

import numba
import numpy as np
import pytest

import datetime_programs
import launch_programs
import oracles
import programs
import reduce
import test_regressions

FIRST_SEED = 1_000_000
BATCHES = 5
BATCH = 40


# Programs whose kernels wait only at block barriers, which the CPU engine
# runs region by region: about one in fifty, too few in the batches above.
BARRIER_SEED = 2_000_000
# Programs whose blocks the CPU engine runs a grid row at a time (several
# blocks, no barriers, atomics, prints or shared memory): about one in ten.
RUNS_SEED = 3_000_000
# Programs of the launch index generator.
LAUNCH_SEED = 4_000_000
# Programs of the datetime64 generator.
DATETIME_SEED = 5_000_000


# About five minutes: the full run has it, the edit loop (--quick) does not.
@pytest.mark.slow
@pytest.mark.parametrize("batch", range(BATCHES + 1))
def test_random_programs_match_numba(batch):
    seeds = range(FIRST_SEED + batch * BATCH, FIRST_SEED + (batch + 1) * BATCH)
    judge_and_report(seeds, confirm_matches=batch == BATCHES)


def chosen_seeds(first, only):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
    try:
        import difftest
    finally:
        sys.path.pop(0)
    return difftest.chosen_seeds(first, BATCH, only)


@pytest.mark.slow
def test_random_programs_that_wait_only_at_block_barriers_match_numba():
    judge_and_report(chosen_seeds(BARRIER_SEED, "barriers"), confirm_matches=False)


@pytest.mark.slow
def test_random_programs_whose_blocks_run_a_grid_row_at_a_time_match_numba():
    judge_and_report(chosen_seeds(RUNS_SEED, "runs"), confirm_matches=False)


@pytest.mark.slow
def test_launch_index_programs_match_numba():
    judge_and_report(range(LAUNCH_SEED, LAUNCH_SEED + BATCH), confirm_matches=True, generator=launch_programs)


@pytest.mark.slow
def test_datetime_programs_match_numba():
    judge_and_report(range(DATETIME_SEED, DATETIME_SEED + BATCH), confirm_matches=True,
                     generator=datetime_programs)


def test_datetime_programs_are_typed_by_numbas_rules_and_reproducible():
    """Every expression of a datetime program compiles under numba.njit
    (its types and units are Numba's), and a seed gives one program."""
    for seed in range(DATETIME_SEED, DATETIME_SEED + 10):
        program = datetime_programs.generate(seed)
        assert program.render("k") == datetime_programs.generate(seed).render("k")
        namespace = {}
        exec(oracles.HOST_HEADER + program.render("k", host=True), namespace)
        arguments, outputs = program.arguments()
        program.run_host(namespace["k"], arguments)
        for name, out in outputs.items():
            assert (out.view(np.uint8) != 0x5A).any(), f"seed {seed}: {name} was never stored"


def judge_and_report(seeds, confirm_matches, generator=programs):
    batch_programs = [generator.generate(seed) for seed in seeds]
    outcomes = oracles.judge(batch_programs, confirm_matches=confirm_matches)
    findings = [o for o in outcomes if o.verdict in oracles.FINDINGS]
    report = []
    for outcome in findings:
        program = generator.generate(outcome.seed)
        report.append(f"seed {outcome.seed}: {outcome.verdict}\n{outcome.detail[:2000]}\n"
                      f"{program.render(f'k{outcome.seed}')}")
    assert not findings, "\n\n".join(report)
    # The generator must keep producing programs Numba accepts.
    invalid = sum(o.verdict == oracles.INVALID for o in outcomes)
    assert invalid <= BATCH // 10, f"{invalid} of {BATCH} programs are ones Numba rejects"


def test_the_generator_is_deterministic():
    assert programs.generate(7).render("k") == programs.generate(7).render("k")



def test_the_generator_types_a_constant_conditional_as_the_branch_numba_keeps():
    """Numba prunes the branch a constant test never takes (CPython folds
    `not True` first), so `a if True else b` has a's type: the generator
    must know, or a variable it assigns one to unifies to float64 and a
    later cast to an integer is undefined where the float is out of range."""
    generator = programs.Generator(1)
    small = programs.Cast("int", "uint16", programs.Lit("int", "7"))
    wide = programs.Lit("int", "3")
    true, false = programs.Lit("bool", "True"), programs.Lit("bool", "False")
    assert generator.type_of(programs.IfExp("int", true, small, wide)) == "uint16"
    assert generator.type_of(programs.IfExp("int", false, small, wide)) == "int64"
    assert generator.type_of(programs.IfExp("int", programs.Unary("bool", "not ", true), small, wide)) == "int64"


def test_the_generator_folds_constant_tests_as_cpython_compiles_them():
    """CPython compiles `a if (False if False else True) else b` to `a`
    alone, so Numba types it as `a`: the generator must too, or a variable
    it thinks exactly int64 holds a uint8 until a loop merges it."""
    generator = programs.Generator(1)
    small = programs.Cast("int", "uint8", programs.Lit("int", "7"))
    wide = programs.Lit("int", "3")
    true, false = programs.Lit("bool", "True"), programs.Lit("bool", "False")
    nested = programs.IfExp("bool", false, false, true)
    assert generator.type_of(programs.IfExp("int", nested, small, wide)) == "uint8"
    assert generator.type_of(programs.IfExp("int", programs.BoolOp("bool", "and", [true, false]), small, wide)) == "int64"
    generator.variables = [("v0", "bool", None)]
    unknown = programs.Name("bool", "v0")
    assert generator.type_of(programs.IfExp("int", programs.BoolOp("bool", "or", [unknown, true]), small, wide)) == "uint8"
    assert programs.constant_truth(programs.BoolOp("bool", "and", [unknown, true])) is None


def test_some_programs_synchronize_through_shared_memory():
    synchronizing = [programs.generate(seed) for seed in range(1, 101)]
    synchronizing = [p for p in synchronizing if p.synchronizes]
    assert 15 <= len(synchronizing) <= 45, f"{len(synchronizing)} of 100 programs synchronize"
    kernel, host = synchronizing[0].render("k"), synchronizing[0].render("k", host=True)
    assert "cuda.syncthreads" in kernel and "cuda.shared.array" in kernel
    assert "yield" in host and "cuda." not in host


def test_programs_loop_over_tuples_and_index_them_at_run_time():
    """What a tuple read at a run-time index lowers to (its slots, filled
    where the tuple is made) is exercised by loops over tuples and by
    indices, negative ones too, computed from the thread's values."""
    sources = [programs.generate(seed).render("k") for seed in range(1, 101)]
    looping = [s for s in sources if re.search(r"^ *for item\d[if] in \(", s, re.M)]
    indexed = [s for s in sources if re.search(r",\)\[\(\(.* % ", s)]
    negative = [s for s in indexed if re.search(r",\)\[\(\(\(.* % .*\) - \d\)\]", s)]
    assert len(looping) >= 50, f"{len(looping)} of 100 programs loop over a tuple"
    assert len(indexed) >= 50, f"{len(indexed)} of 100 programs index a tuple at run time"
    assert negative, "no program indexes a tuple from its end at run time"


def test_some_programs_define_functions_inside_the_kernel_some_as_lambdas():
    """Called where defined or through the variable a lambda is assigned
    to, they read the kernel's variables as they are at the call."""
    generated = [programs.generate(seed) for seed in range(1, 201)]
    defining = [p for p in generated if any(d.nested for d in p.devices)]
    lambdas = [p for p in defining if any(d.is_lambda for d in p.devices)]
    assert 40 <= len(defining) <= 110, f"{len(defining)} of 200 programs define a function in the kernel"
    assert 10 <= len(lambdas) <= 60, f"{len(lambdas)} of them write it as a lambda"
    kernel, host = lambdas[0].render("k"), lambdas[0].render("k", host=True)
    assert re.search(r"^    k_d\d+ = lambda ", kernel, re.M) and re.search(r"^    k_d\d+ = lambda ", host, re.M), kernel


def test_a_regression_found_on_many_blocks_records_its_grid(tmp_path):
    """test_regressions.py launches a regression on the grid its file names."""
    program = next(p for p in map(programs.generate, range(1, 200)) if p.blocks > 1)
    reduce.write_regression(program, tmp_path, "case")
    for name in ("case.py", "case_reference.py"):
        assert f"\nBLOCKS = {programs.MANY_BLOCKS}\n" in (tmp_path / name).read_text(), name


def test_a_regression_found_on_a_2d_or_3d_launch_records_it(tmp_path):
    """test_regressions.py launches such a regression as it was found."""
    program = next(p for p in map(programs.generate, range(1, 200)) if p.shape)
    reduce.write_regression(program, tmp_path, "case")
    for name in ("case.py", "case_reference.py"):
        assert f"\nLAUNCH = {program.shape!r}\n" in (tmp_path / name).read_text(), name


NUMBERING = """
import sys
import numpy as np
from numba import cuda

@cuda.jit
def number(out_t, out_tx):
{index}
    out_t[t] = t
    out_tx[t] = tx

grid, block = {launch!r}
out_t, out_tx = np.full({threads}, -1, np.int64), np.full({threads}, -1, np.int64)
number[grid, block](out_t, out_tx)
print(out_t.tolist() == list(range({threads})), out_tx.tolist() == [t % {block_threads} for t in range({threads})])
"""


@pytest.mark.parametrize("dimensions, block_threads",
                         [(2, programs.THREADS), (3, programs.THREADS), (2, programs.WARP_THREADS),
                          (3, programs.WARP_THREADS)])
def test_a_2d_or_3d_launch_numbers_threads_as_a_1d_launch(dimensions, block_threads, tmp_path):
    """Numba's simulator runs the index lines of a 2-D or 3-D program: `t`
    must cover the grid once, block after block, and `tx` number each
    block's threads from 0, as in the 1-D launch the njit reference runs."""
    grids = [g for g in programs.GRID_SHAPES[dimensions] if len(set(g)) == dimensions]
    launch = (grids[0], programs.BLOCK_SHAPES[block_threads][dimensions][0])
    threads = programs.MANY_BLOCKS * block_threads
    source = NUMBERING.format(index="\n".join(programs.linear_thread_index(dimensions, block_threads)),
                              launch=launch, threads=threads, block_threads=block_threads)
    ran = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                         env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1"))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True", "True"], f"launch {launch}: t covers the grid, tx each block: {ran.stdout}"


def test_a_regression_runs_on_the_launch_it_records(tmp_path):
    """A regression written from a synchronizing 2-D or 3-D program of many
    blocks of a whole warp builds, runs on its own launch on the CPU
    engine's workers, and matches its reference, as test_regressions.py
    checks each one."""
    candidates = (p for p in map(programs.generate, range(1, 3000))
                  if p.synchronizes and p.blocks > 1 and p.shape and p.threads == programs.WARP_THREADS)
    found, work = tmp_path / "found", tmp_path / "work"
    work.mkdir()
    for program in candidates:
        reduce.write_regression(program, found, "case")
        if _numba_compiles(found / "case_reference.py", program.blocks, program.threads):
            break
    test_regressions.check_regression(found, "case", work)


def _numba_compiles(reference, blocks, threads):
    """Whether Numba types the njit reference: some generators it cannot
    ("state variable types cannot be found"), and those programs are no
    test of Kiln."""
    try:
        arrays = test_regressions.regression_arrays(0, blocks, threads)
        test_regressions.reference_outputs(reference, arrays, blocks, threads)
    except numba.core.errors.TypingError:
        return False
    return True


def test_some_programs_apply_atomics_that_every_thread_shares():
    updating = [p for p in map(programs.generate, range(1, 101)) if "cuda.atomic." in p.render("k")]
    assert 20 <= len(updating) <= 70, f"{len(updating)} of 100 programs apply atomics"
    base = programs.scratch_length(updating[0].blocks, updating[0].threads)
    host = updating[0].render("k", host=True)
    updates = [f"s_i[{base + k}] = s_i[{base + k}]" for k in range(len(programs.ATOMIC_OPS))]
    assert "cuda." not in host and any(update in host for update in updates), host


def test_some_programs_run_blocks_of_a_whole_warp():
    """All 32 lanes active: shuffles may read past either end of the warp,
    `shfl_down_sync` included, and votes see every lane."""
    whole = [p for p in map(programs.generate, range(1, 600)) if p.threads == programs.WARP_THREADS]
    first_200 = sum(p.seed < 201 for p in whole)
    assert 10 <= first_200 <= 60, f"{first_200} of 200 programs run blocks of a whole warp"
    assert any("cuda.shfl_down_sync(0xffffffff," in p.render("k") for p in whole if p.synchronizes)


def test_a_program_numba_cuda_refuses_is_invalid_not_a_finding(tmp_path):
    """The njit rendering emulates a shuffle, so only Numba's CUDA compiler
    sees that a shuffle of a uint16 is refused (as Kiln refuses it): such a
    program is invalid. A program Numba compiles is no refusal."""
    value = programs.Load("int", "a_u16", programs.Name("int", "t"))
    exchange = programs.WarpExchange("xor", "v0", "int", value, delta=1)
    kernel = programs.Function("kernel", [], [exchange], None)
    refused = programs.Program(1, [("v0", "int", programs.Lit("int", "0"))], kernel, [], [])
    assert "shfl_sync only supports 32- and 64-bit ints and floats" in (
        oracles.numba_cuda_refusal(refused, tmp_path / "refused", 120) or "")
    exchange.value = programs.Cast("int", "int64", value)
    assert oracles.numba_cuda_refusal(refused, tmp_path / "compiled", 120) is None


def test_shared_atomics_and_their_reads_never_share_a_phase():
    """Every phase of a synchronizing kernel (the code between two
    barriers) either updates the block's shared atomics or reads them,
    never both, and the first phase, which sets them, does neither: so
    a read sees every update before it, in any order of threads."""
    barrier = re.compile(r"cuda\.(syncthreads|syncwarp)")
    update = re.compile(rf"cuda\.atomic\.\w+\({programs.SHARED_ATOMICS},")
    read = re.compile(rf"{programs.SHARED_ATOMICS}\[\d+\]")
    updating = reading = 0
    for program in filter(lambda p: p.synchronizes, map(programs.generate, range(1, 301))):
        phases = [[]]
        for line in program.render("k").splitlines():
            (phases.append([]) if barrier.search(line) else phases[-1].append(line))
        for number, phase in enumerate(phases):
            updates, reads = any(map(update.search, phase)), any(map(read.search, phase))
            assert not (updates and reads), f"seed {program.seed}: phase {number} updates and reads"
            assert number > 0 or not (updates or reads), f"seed {program.seed}: the first phase uses them"
            updating, reading = updating + updates, reading + reads
    assert updating and reading, f"{updating} phases update shared atomics, {reading} read them"


def test_an_atomic_counts_as_a_store_to_global_memory():
    """A kernel whose only write is an atomic keeps its store: PTX's
    atomics on global (or generic) memory write it, shared ones do not,
    nor does passing a parameter to a call."""
    writes = ["st.global.u64 [%rd1], %rd2;", "atom.global.add.u64 %rd3, [%rd2], %rd1;",
              "red.global.add.u64 [%rd2], %rd1;", "atom.add.u64 %rd3, [%rd2], %rd1;"]
    others = ["atom.shared.add.u64 %rd3, [%rd2], %rd1;", "st.shared.u64 [%rd1], %rd2;", "st.param.b64 [param0], %rd1;"]
    assert all(oracles.stores_to_global_memory(text) for text in writes)
    assert not any(oracles.stores_to_global_memory(text) for text in others)


def test_the_run_without_index_checks_is_held_to_the_reference_mode(tmp_path, monkeypatch):
    """A module built with both copies of its kernels' bodies runs a third
    time, without index checks; that run must agree with the reference
    mode as the engine's fast paths must, and where it does not the tester
    reports a fast-path finding naming it."""
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "cache"))
    program = next(p for p in map(programs.generate, range(1, 100, 2)) if p.signature)
    assert oracles.switchable_index_checks(program)
    [(seed, result)] = list(oracles._run_on_kiln([program], oracles.generator_of(program), tmp_path, 300))
    assert "unchecked" in result, f"seed {seed}: no run without index checks: {result}"
    expected = {"outputs": result["reference"]["outputs"]}
    assert oracles._verdict(program, result, expected).verdict == oracles.MATCH

    # Every bit of one element inverted: another value, even of a NaN.
    name, encoded = next(iter(result["unchecked"]["outputs"].items()))
    changed = oracles.decode(encoded).copy()
    first = changed.reshape(-1)[:1].view(np.uint8)
    first[:] = ~first
    result["unchecked"]["outputs"][name] = oracles.encode(changed)
    outcome = oracles._verdict(program, result, expected)
    assert outcome.verdict == oracles.FAST_PATH_MISMATCH, outcome
    assert outcome.detail.startswith(f"{name} (") and "differs at 1 of" in outcome.detail, outcome.detail
    assert "the engine without index checks" in outcome.detail, outcome.detail
