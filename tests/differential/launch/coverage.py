"""Coverage cells (intrinsic, dtype, layout, form): every possible one, the
FOCUS_CELLS each seed's program is built around, the cells a kernel's
statements realise, and the report of the cells a campaign hit."""

import random

from .expressions import Load
from .statements import ForRange, Guarded, Store
from .vocabulary import DTYPES, FORMS, INTRINSICS, LAYOUTS


def coverage_cells():
    """Every possible cell (intrinsic, dtype, layout, form): a 0-d array
    takes no index, so it has no index cells."""
    return {(intrinsic, dtype, layout, form)
            for intrinsic in INTRINSICS for dtype in DTYPES for layout in LAYOUTS for form in FORMS
            if not (layout == "0-d" and form == "index")}


# Each program is built around FOCUS_CELLS cells, taken in turn from one
# fixed shuffle of every cell: any CELL_ROTATION consecutive seeds cover all.
FOCUS_CELLS = 4
_ROTATION = sorted(coverage_cells())
random.Random("launch programs: the rotation of cells").shuffle(_ROTATION)
CELL_ROTATION = -(-len(_ROTATION) // FOCUS_CELLS)


def focus_cells(seed):
    return [_ROTATION[(seed * FOCUS_CELLS + k) % len(_ROTATION)] for k in range(FOCUS_CELLS)]


def coverage_report(counter):
    """A plain-text table of the cells a campaign hit (`counter`, a Counter
    of cells): the total, the forms hit per intrinsic, the count per dtype
    and per layout, and the cells never hit."""
    possible = coverage_cells()
    hit = {cell for cell, count in counter.items() if count and cell in possible}
    lines = [f"cells hit: {len(hit)} / {len(possible)} ({100.0 * len(hit) / len(possible):.1f}%)", "",
             f"{'intrinsic':<26}" + "".join(f"{form:>12}" for form in FORMS)]
    for intrinsic in INTRINSICS:
        row = []
        for form in FORMS:
            cells = {c for c in possible if c[0] == intrinsic and c[3] == form}
            row.append(f"{len(cells & hit)}/{len(cells)}")
        lines.append(f"{intrinsic:<26}" + "".join(f"{r:>12}" for r in row))
    for position, title in ((1, "dtype"), (2, "layout")):
        lines += ["", f"{title:<14}{'cells hit':>12}{'uses':>10}"]
        for value in (DTYPES if position == 1 else LAYOUTS):
            cells = {c for c in possible if c[position] == value}
            uses = sum(count for cell, count in counter.items() if cell[position] == value)
            lines.append(f"{value:<14}{f'{len(cells & hit)}/{len(cells)}':>12}{uses:>10}")
    missed = sorted(possible - hit)
    lines.append("")
    if not missed:
        lines.append("cells never hit: none")
    elif len(missed) <= 40:
        lines.append(f"cells never hit ({len(missed)}):")
        lines += [f"  {cell}" for cell in missed]
    else:
        lines.append(f"cells never hit: {len(missed)} (first 40 below)")
        lines += [f"  {cell}" for cell in missed[:40]]
    return "\n".join(lines)


def program_cells(statements):
    """The coverage cells of a kernel's statements: each store's index and
    value, and each load's index, by the intrinsics inside."""
    cells = set()

    def loads(expr):
        for node in expr.walk():
            if isinstance(node, Load):
                layout, dtype = node.array.layout, node.array.element_type(node.field)
                for component in node.index:
                    for name, direct in component.uses():
                        cells.add((name, dtype, layout, "index" if direct else "arithmetic"))

    def visit(body, loop_uses):
        for statement in body:
            for expr in statement.expressions():
                loads(expr)
            if isinstance(statement, Store):
                dtype, layout = statement.array.element_type(statement.field), statement.array.layout
                for component in statement.index:
                    for name, direct in component.uses():
                        cells.add((name, dtype, layout, "index" if direct else "arithmetic"))
                for name, direct in statement.value.uses():
                    cells.add((name, dtype, layout, "value" if direct else "arithmetic"))
                for name in loop_uses:
                    cells.add((name, dtype, layout, "arithmetic"))
            if isinstance(statement, ForRange):
                inner = loop_uses + [n for e in (statement.start, statement.step) for n, _ in e.uses()]
                visit(statement.body, inner)
            elif isinstance(statement, Guarded):
                visit(statement.body, loop_uses)

    visit(statements, [])
    return cells
