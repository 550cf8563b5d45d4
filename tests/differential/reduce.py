"""Shrinking a finding to a minimal program, by delta debugging.

Greedy, to a fixed point: delete each statement, replace each compound
statement by one of its bodies, and replace each expression by a leaf of
its kind or by one of its own operands of that kind; keep every change
after which the program still gives the same verdict (and, for a
mismatch, still a mismatch against Numba). What is left becomes a
regression test: the kernel as Kiln compiles it and the same program as
`@numba.njit` functions, whose results are the expected ones.
"""

import copy
import pathlib

import oracles
import programs as P


def _statement_lists(program):
    lists = [program.kernel.body] + [d.body for d in program.devices]
    found = []
    for body in lists:
        found.append(body)
        for stmt in P.walk_statements(body):
            found.extend(stmt.bodies())
    return found


def _holds_loose_jump(body):
    """Whether `body` has a break or continue outside any loop of its own:
    it cannot leave its loop."""
    for stmt in body:
        if isinstance(stmt, P.Jump):
            return True
        if isinstance(stmt, P.If) and any(_holds_loose_jump(b) for b in stmt.bodies()):
            return True
    return False


def _fills_shared_memory(program, body, position):
    """Whether the statement is one of a synchronizing kernel's first
    stores to shared memory, before its first barrier."""
    first_stores = (P.SharedStore, P.SharedAtomicsInit)
    if body is not program.kernel.body or not isinstance(body[position], first_stores):
        return False
    return not any(isinstance(stmt, P.Barrier) for stmt in body[:position])


def _candidates(program):
    """Smaller variants of `program`, each made by one change."""
    for index in range(len(_statement_lists(program))):
        size = len(_statement_lists(program)[index])
        for position in range(size):
            # Delete the statement.
            variant = copy.deepcopy(program)
            body = _statement_lists(variant)[index]
            if isinstance(body[position], P.Return) and body is not variant.kernel.body and \
                    any(body is d.body for d in variant.devices) and position == len(body) - 1:
                continue  # a device function's final return
            if isinstance(body[position], P.Barrier) or _fills_shared_memory(variant, body, position):
                continue  # without it, threads would race or read what no thread wrote
            removed = body.pop(position)
            yield variant
            # Replace a compound statement by one of its bodies.
            for nested in range(len(removed.bodies())):
                variant = copy.deepcopy(program)
                body = _statement_lists(variant)[index]
                inner = body[position].bodies()[nested]
                if isinstance(body[position], (P.For, P.ForTuple, P.While)) and nested == 0 and _holds_loose_jump(inner):
                    continue
                body[position:position + 1] = inner
                yield variant
    # Simplify expressions, one at a time.
    count = sum(1 for _ in _expression_slots(program))
    for slot in range(count):
        for replacement in range(4):
            variant = copy.deepcopy(program)
            if _replace_expression(variant, slot, replacement):
                yield variant


def _expression_slots(program):
    """(owner, attribute or index, expression) for every expression."""
    def visit(owner, key, expr):
        yield owner, key, expr
        for field in ("operand", "left", "right", "index", "test", "body", "orelse"):
            child = getattr(expr, field, None)
            if isinstance(child, P.Expr):
                yield from visit(expr, field, child)
        for field in ("operands", "arguments", "elements"):
            children = getattr(expr, field, None)
            if isinstance(children, list):
                for i, child in enumerate(children):
                    yield from visit(children, i, child)

    for body in _statement_lists(program):
        for stmt in body:
            for field in ("value", "test", "index"):
                expr = getattr(stmt, field, None)
                if isinstance(expr, P.Expr):
                    yield from visit(stmt, field, expr)
            for field in ("values", "bounds"):
                exprs = getattr(stmt, field, None)
                if isinstance(exprs, list):
                    for i, expr in enumerate(exprs):
                        yield from visit(exprs, i, expr)


def _replace_expression(program, slot, choice):
    for number, (owner, key, expr) in enumerate(_expression_slots(program)):
        if number != slot:
            continue
        leaves = {"int": P.Lit("int", "1"), "float": P.Lit("float", "1.5"), "bool": P.Lit("bool", "True")}
        options = [leaves.get(expr.kind)]
        options += [c for c in expr.children() if c.kind == expr.kind]
        if choice >= len(options) or options[choice] is None or isinstance(expr, P.Lit):
            return False
        if isinstance(owner, list):
            owner[key] = options[choice]
        else:
            setattr(owner, key, options[choice])
        return True
    return False


def reduce(program, verdict, log=print):
    """The smallest variant of `program` found that still gives `verdict`.

    Candidates before the last accepted one failed already; each pass
    resumes after them, and passes repeat until one accepts nothing."""
    current = program
    progress = True
    while progress:
        progress = False
        skip = 0
        while True:
            accepted = False
            for number, candidate in enumerate(_candidates(current)):
                if number < skip:
                    continue
                outcome = oracles.judge([candidate], confirm_matches=True, simulator_too=False)[0]
                if outcome.verdict == verdict:
                    current, skip, accepted, progress = candidate, number, True, True
                    log(f"  reduced to {len(current.render('k').splitlines())} lines")
                    break
            if not accepted:
                break
    return current


def write_regression(program, directory, name):
    """Writes NAME.py (the kernel) and NAME_reference.py (njit): a test in
    test_regressions.py compiles the first with Kiln and compares it with
    the second."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    kernel = f"k{program.seed}"
    header = f"# Found by the differential tester from seed {program.seed}, then reduced.\n"
    grid = f"BLOCKS = {program.blocks}\n" if program.blocks > 1 else ""
    grid += f"LAUNCH = {program.launch()!r}\n" if program.launch() != (program.blocks, P.THREADS) else ""
    grid = "\n" + grid if grid else ""
    (directory / f"{name}.py").write_text(header + oracles.HEADER + grid + "\n\n" + program.render(kernel))
    (directory / f"{name}_reference.py").write_text(
        header + oracles.HOST_HEADER + grid + "\n\n" + program.render(kernel, host=True))
