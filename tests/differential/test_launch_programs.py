"""The launch-index generator (launch_programs.py, and its parts in the
package launch/) on its own, without Kiln: programs are the same for the
same seed, parse, cover every cell of (intrinsic, dtype, layout, form)
within CELL_ROTATION seeds, are race-free and in bounds over every thread
of their launch, and take arguments their signatures accept; the typing
tables and the float16 rounding the host rendering relies on agree with
Numba's CUDA target and with NumPy."""

import ast
import collections
import importlib
import itertools
import operator
import os
import pathlib
import subprocess
import sys

import numba
import numpy as np
import pytest
from numba.core import sigutils, types

import launch_programs
import oracles
from launch import numba_typing
from launch.arrays import ArrayParam
from launch.expressions import Const, Load, Read
from launch.program import FLOAT16_HELPER
from launch.statements import Guarded, Store, walk_statements
from launch.tracer import StoreTracer

# Enough consecutive seeds to go round every cell once (and then some).
SEEDS = range(2000)


@pytest.fixture(scope="module")
def programs():
    return [launch_programs.generate(seed) for seed in SEEDS]


def test_rotation_takes_fewer_seeds_than_the_campaign():
    assert launch_programs.CELL_ROTATION <= len(SEEDS)


def test_a_seed_gives_the_same_program_every_time():
    for seed in (0, 7, 123, 99991):
        first, second = launch_programs.generate(seed), launch_programs.generate(seed)
        assert first.render("k") == second.render("k")
        assert first.render("k", host=True) == second.render("k", host=True)
        assert (first.signature, first.launch()) == (second.signature, second.launch())
        (args1, outputs1), (args2, outputs2) = first.arguments(), second.arguments()
        for a, b in zip(args1, args2):
            assert a is not b
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
        assert outputs1.keys() == outputs2.keys()


def test_a_seed_gives_the_same_program_in_another_process():
    """Nothing depends on Python's string hashing, which differs between
    processes (and so between machines)."""
    seeds = [1, 2, 3, 4000]
    script = ("import sys, launch_programs; sys.stdout.write('\\0'.join("
              f"launch_programs.generate(s).render('k', host=True) for s in {seeds}))")
    directory = pathlib.Path(launch_programs.__file__).parent
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=directory,
                          env=dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(directory)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\0") == [launch_programs.generate(s).render("k", host=True) for s in seeds]


def test_the_harness_makes_a_program_again_from_the_generator_it_names():
    """The harness's child processes import the module a program names
    (oracles.generator_of): the entry, whose generate() makes it again, not
    the package module that defines Program."""
    program = launch_programs.generate(11)
    again = importlib.import_module(oracles.generator_of(program)).generate(11)
    assert oracles.generator_of(program) == "launch_programs"
    assert again.render("k", host=True) == program.render("k", host=True)


def test_seeds_give_different_programs(programs):
    assert len({p.render("k") for p in programs[:200]}) == 200


def test_every_program_covers_its_focus_cells(programs):
    missed = [(p.seed, cell) for p in programs for cell in p.focus if cell not in p.coverage()]
    assert not missed, f"focus cells a program did not realise: {missed[:10]}"


def test_the_programs_cover_every_cell(programs):
    hit = collections.Counter(cell for p in programs for cell in p.coverage())
    possible = launch_programs.coverage_cells()
    assert not set(hit) - possible, f"cells outside coverage_cells(): {sorted(set(hit) - possible)[:10]}"
    missed = sorted(possible - set(hit))
    assert not missed, f"{len(missed)} cells never hit, such as {missed[:20]}"


def test_coverage_cells_leave_out_indices_of_0d_arrays():
    cells = launch_programs.coverage_cells()
    assert not [c for c in cells if c[2] == "0-d" and c[3] == "index"]
    intrinsics, dtypes = len(launch_programs.INTRINSICS), len(launch_programs.DTYPES)
    assert len(cells) == intrinsics * dtypes * (6 * 3 - 1)
    for name in ("threadIdx.x", "grid(2)", "laneid", "warpsize", "gridsize(3)", "global x (block first)",
                 "global z (thread first)", "global y (dim first)"):
        assert name in launch_programs.INTRINSICS


def test_every_rendering_parses_and_names_stay_apart(programs):
    batch = programs[:150]
    for host in (False, True):
        header = "import numpy as np\nfrom numba import " + ("njit" if host else "cuda") + "\n"
        module = ast.parse("\n\n".join([header] + [p.render(f"k{p.seed}", host) for p in batch]))
        names = [node.name for node in module.body if isinstance(node, ast.FunctionDef)]
        assert len(names) == len(set(names)), "two programs of one module define one name"
        for node in module.body:
            if isinstance(node, ast.FunctionDef):
                assert node.name.split("_")[0] in {f"k{p.seed}" for p in batch}
    for p in batch:
        lines = p.render("kernel").splitlines()
        position = lines.index(f'@cuda.jit("{p.signature}")')
        assert lines[position + 1].startswith("def kernel(")


def test_programs_are_race_free_and_in_bounds(programs):
    problems = [(p.seed, launch_programs.check_program(p)) for p in programs]
    problems = [(seed, found) for seed, found in problems if found]
    assert not problems, f"programs with more than one meaning: {problems[:5]}"


def test_the_tracer_finds_a_race_and_an_index_out_of_bounds():
    program = launch_programs.generate(3)
    store = next(s for s in walk_statements(program.statements) if isinstance(s, Store) and s.owned and s.index)
    launch = program.launch_shape
    racy = Store(store.array, [Const("int64", 0)] * store.array.ndim,
                 Read(launch_programs.INTRINSICS["threadIdx.x"], launch), owned=True)
    far = Store(store.array, [Const("int64", store.array.shape[0])] + [Const("int64", 0)] * (store.array.ndim - 1),
                Const("int64", 1), owned=False)
    tracer = StoreTracer(launch)
    tracer.run([racy, far])
    found = " ".join(tracer.problems())
    assert "two threads store into one element" in found and "out of bounds" in found


def test_stores_write_the_threads_they_should(programs):
    """Every store runs for some thread (no guard shuts all out), but those
    under a condition on data."""
    for p in programs[:300]:
        tracer = StoreTracer(p.launch_shape)
        tracer.run(p.statements)
        for statement in walk_statements(p.statements):
            if isinstance(statement, Guarded) and any(isinstance(node, Load) for node in statement.test.walk()):
                continue
            for store in statement.body if isinstance(statement, Guarded) else [statement]:
                if isinstance(store, Store):
                    assert tracer.runs(store) > 0, f"seed {p.seed}: a store no thread runs"


def _signature_types(program):
    return sigutils._parse_signature_string(program.signature).args


def test_signatures_accept_the_arguments(programs):
    for p in programs[:300]:
        parameters = _signature_types(p)
        arguments, outputs = p.arguments()
        assert len(parameters) == len(arguments) == len(p.parameters)
        for parameter, argument in zip(parameters, arguments):
            given = numba.typeof(argument)
            if isinstance(parameter, types.Array):
                assert (given.ndim, given.dtype) == (parameter.ndim, parameter.dtype), (p.seed, parameter, given)
                assert parameter.layout == "A" or given.layout == parameter.layout, (p.seed, parameter, given)
            else:
                assert given == parameter, (p.seed, parameter, given)


def test_outputs_are_whole_bases_that_start_as_the_sentinel(programs):
    for p in programs[:200]:
        arguments, outputs = p.arguments()
        written = [a for a, q in zip(arguments, p.parameters)
                   if isinstance(q, ArrayParam) and q.output]
        assert len(written) == len(outputs)
        for argument, base in zip(written, outputs.values()):
            assert np.shares_memory(argument, base) and base.size >= argument.size
            raw = np.frombuffer(base.tobytes(), np.uint8)
            assert (raw == launch_programs.SENTINEL_BYTE).all()
        again, _ = p.arguments()
        assert all(a is not b for a, b in zip(arguments, again))


def test_launches_stay_small_and_some_are_no_multiple_of_a_warp(programs):
    totals = [p.blocks * p.threads for p in programs]
    assert max(totals) <= launch_programs.MAX_THREADS
    assert sum(t % 32 != 0 for t in totals) > len(totals) // 2
    dimensions = collections.Counter((len(p.launch_shape.grid), len(p.launch_shape.block)) for p in programs)
    assert len(dimensions) == 9, "every pair of grid and block dimensions"
    assert any(isinstance(p.launch()[0], int) for p in programs)


def test_some_programs_the_simulator_may_judge(programs):
    assert any(p.simulator_judges for p in programs)
    assert not any(p.simulator_judges for p in programs if "Record(" in p.signature)


# Numba's CUDA target types float16 with rules the CPU target lacks; the
# generator keeps a table of them, checked here against the CUDA target.
NUMBERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
           "float64", "bool"]


@pytest.fixture(scope="module")
def cuda_typing():
    from numba.cuda.descriptor import cuda_target
    context = cuda_target.typing_context
    context.refresh()
    return context


def _resolved(context, function, operands):
    try:
        found = context.resolve_function_type(function, tuple(numba_typing._numba_type(o) for o in operands), {})
    except Exception:
        return None
    if found is None:
        return None
    converted = found.args
    if len(converted) == 1 and isinstance(converted[0], types.BaseTuple) and len(operands) > 1:
        converted = converted[0].types
    return tuple(numba_typing._type_name(a) for a in converted), numba_typing._type_name(found.return_type)


def test_the_float16_table_is_numba_cuda_typing(cuda_typing):
    for op in ("+", "-", "*", "/", "//", "%") + numba_typing.COMPARISONS:
        for other in NUMBERS:
            for operands in (("float16", other), (other, "float16")):
                want = _resolved(cuda_typing, numba_typing.OPERATORS[op], operands)
                got = numba_typing.signature(op, *operands)
                if got is not None:
                    assert got == want, (op, operands, got, want)
    for name in ("min", "max"):
        want = _resolved(cuda_typing, cuda_typing.resolve_value_type({"min": min, "max": max}[name]),
                         ("float16", "float16"))
        assert numba_typing.signature(name, "float16", "float16") == want
    for op, function in (("neg", operator.neg), ("abs", abs)):
        if op == "abs":
            function = cuda_typing.resolve_value_type(abs)
        assert numba_typing.signature(op, "float16") == _resolved(cuda_typing, function, ("float16",))


def test_the_cpu_typing_the_generator_asks_is_numba_cuda_typing(cuda_typing):
    others = [n for n in NUMBERS if n != "float16"] + ["complex64", "complex128"]
    for op in ("+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>") + numba_typing.COMPARISONS:
        for operands in itertools.product(others, repeat=2):
            got = numba_typing.signature(op, *operands)
            if got is not None:
                assert got == _resolved(cuda_typing, numba_typing.OPERATORS[op], operands), (op, operands)
    # Builtins compile an implementation per pair of types: a few pairs.
    pairs = [("int32", "int64"), ("int64", "int64"), ("uint8", "int32"), ("float32", "float64"), ("int64", "float64"),
             ("uint64", "int64"), ("bool", "int32")]
    for name in ("min", "max", "complex"):
        function = cuda_typing.resolve_value_type({"min": min, "max": max, "complex": complex}[name])
        for operands in pairs:
            got = numba_typing.signature(name, *operands)
            if got is not None:
                assert got == _resolved(cuda_typing, function, operands), (name, operands)


def test_the_host_float16_rounding_is_numpys():
    namespace = {"np": np, "njit": numba.njit, "math": __import__("math")}
    exec(FLOAT16_HELPER.format(name="k"), namespace)
    rounding = namespace["k_f16"]
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-9, 6, 3000),
                             np.arange(-2050, 2050, 0.125), [65504.0, 65519.99, 65520.0, -65520.0, 6e-8, 3e-8, 0.0,
                                                             -0.0, np.inf, -np.inf]])
    with np.errstate(over="ignore"):
        want = values.astype(np.float16).astype(np.float64)
    got = np.array([rounding(v) for v in values])
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_the_host_rendering_runs_and_stores(programs):
    """A few programs through njit and run_host: float16 shadows, fields of
    structured arrays, device functions and 0-d arrays among them."""
    chosen = []
    for wanted in ("float16", "Record(", "Array("):
        chosen.append(next(p for p in programs if wanted in p.signature and p not in chosen and
                           p.blocks * p.threads <= 256))
    for p in chosen:
        namespace = {}
        exec(compile(oracles.HOST_HEADER + p.render(f"k{p.seed}", host=True),
                     f"<host {p.seed}>", "exec"), namespace)
        arguments, outputs = p.arguments()
        p.run_host(namespace[f"k{p.seed}"], arguments)
        changed = [name for name, base in outputs.items()
                   if (np.frombuffer(base.tobytes(), np.uint8) != launch_programs.SENTINEL_BYTE).any()]
        assert changed, f"seed {p.seed}: the host rendering stored nothing"


def test_numbas_cuda_compiler_accepts_the_kernels(programs, monkeypatch):
    """Numba's compiled semantics is the specification: its CUDA compiler
    (which needs no GPU for PTX) must take the kernels, float16 and
    structured arrays among them."""
    import numba.cuda.dispatcher
    from numba import cuda

    class Device:
        compute_capability = (8, 0)

    # A device function asks for the current device's compute capability.
    monkeypatch.setattr(numba.cuda.dispatcher, "get_current_device", Device)
    chosen = [next(p for p in programs if "float16" in p.signature and "Record(" in p.signature),
              next(p for p in programs if "Array(" in p.signature and p.devices), programs[0]]
    for p in chosen:
        name = f"k{p.seed}"
        source = p.render(name).replace(f'@cuda.jit("{p.signature}")\n', "")
        namespace = {}
        exec(compile("import numpy as np\nfrom numba import cuda\n" + source, f"<kernel {p.seed}>", "exec"),
             namespace)
        cuda.compile_ptx(namespace[name], p.signature, cc=(8, 0))


def test_coverage_report_counts_and_lists_what_was_missed():
    cells = sorted(launch_programs.coverage_cells())
    counter = collections.Counter({cells[0]: 3, cells[1]: 1})
    report = launch_programs.coverage_report(counter)
    assert report.startswith(f"cells hit: 2 / {len(cells)}")
    assert "threadIdx.x" in report and "float16" in report and "strided view" in report
    assert f"cells never hit: {len(cells) - 2}" in report
    full = launch_programs.coverage_report(collections.Counter(cells))
    assert "cells never hit: none" in full
