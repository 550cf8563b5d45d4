"""Random kernels from fixed seeds: Kiln must compute what Numba computes.

Two hundred programs (tests/differential/programs.py) in five batches, each
judged on Kiln's CPU engine and sm_80 PTX and on Numba's simulator, and
against Numba's compiled semantics wherever the two disagree
(tests/differential/oracles.py); one more batch of forty is confirmed
against Numba's compiled semantics program by program. Any mismatch, compile
error, internal error, crash, hang or lost store fails the batch, with the
seed, the program and what differed; `bench/difftest.py --seed S --count 1
--reduce` shrinks it to a regression test. Long campaigns:
`bench/difftest.py --count 10000`.
"""

import pytest

import oracles
import programs
import reduce

FIRST_SEED = 1_000_000
BATCHES = 5
BATCH = 40


# About five minutes: the full run has it, the edit loop (--quick) does not.
@pytest.mark.slow
@pytest.mark.parametrize("batch", range(BATCHES + 1))
def test_random_programs_match_numba(batch):
    seeds = range(FIRST_SEED + batch * BATCH, FIRST_SEED + (batch + 1) * BATCH)
    batch_programs = [programs.generate(seed) for seed in seeds]
    outcomes = oracles.judge(batch_programs, confirm_matches=batch == BATCHES)
    findings = [o for o in outcomes if o.verdict in oracles.FINDINGS]
    report = []
    for outcome in findings:
        program = programs.generate(outcome.seed)
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


def test_a_regression_found_on_many_blocks_records_its_grid(tmp_path):
    """test_regressions.py launches a regression on the grid its file names."""
    program = next(p for p in map(programs.generate, range(1, 200)) if p.blocks > 1)
    reduce.write_regression(program, tmp_path, "case")
    for name in ("case.py", "case_reference.py"):
        assert f"\nBLOCKS = {programs.MANY_BLOCKS}\n" in (tmp_path / name).read_text(), name
