"""Statements: local variables (Let, Unpack), an early return, a guard, a
loop (ForRange) and a store (Store); each renders itself and names the
expressions it evaluates."""

import dataclasses

from .expressions import Const, Expr, Item, Parameter, TupleOf, Var


@dataclasses.dataclass(eq=False)
class Let:
    var: Var

    def render(self, r, indent):
        return [f"{indent}{self.var.name} = {self.var.bound.render(r)}"]

    def expressions(self):
        return [self.var.bound]


@dataclasses.dataclass(eq=False)
class Unpack:
    """`x, y = cuda.grid(2)`: each Var is bound to an Item of the tuple."""

    vars: list
    tuple_expr: Expr

    def render(self, r, indent):
        return [f"{indent}{', '.join(v.name for v in self.vars)} = {self.tuple_expr.render(r)}"]

    def expressions(self):
        return [self.tuple_expr]


@dataclasses.dataclass(eq=False)
class EarlyReturn:
    test: Expr

    def render(self, r, indent):
        return [f"{indent}if {self.test.render(r)}:", f"{indent}    return"]

    def expressions(self):
        return [self.test]


@dataclasses.dataclass(eq=False)
class Guarded:
    test: Expr
    body: list

    def render(self, r, indent):
        return [f"{indent}if {self.test.render(r)}:"] + \
            [line for statement in self.body for line in statement.render(r, indent + "    ")]

    def expressions(self):
        return [self.test]


@dataclasses.dataclass(eq=False)
class ForRange:
    """`for g in range(start, stop, step):` over the body. A grid-stride
    loop starts at the thread's global index and steps by the grid's
    threads, so that every g belongs to one thread; a row loop, `for g in
    range(m):`, fills a row of the thread's own."""

    var: Expr
    start: Expr
    stop: Expr
    step: Expr
    body: list

    def render(self, r, indent):
        if isinstance(self.start, Const) and self.start.value == 0 and \
                isinstance(self.step, Const) and self.step.value == 1:
            bounds = self.stop.render(r)
        else:
            bounds = f"{self.start.render(r)}, {self.stop.render(r)}, {self.step.render(r)}"
        return [f"{indent}for {self.var.name} in range({bounds}):"] + \
            [line for statement in self.body for line in statement.render(r, indent + "    ")]

    def expressions(self):
        return [self.start, self.stop, self.step]


@dataclasses.dataclass(eq=False)
class Store:
    """`target[index] = value` (`target[index].field = value` for a field
    of a structured array), inline or through a store-helper device
    function. `owned`: the index is injective over the threads that run
    the store; otherwise the value depends only on the index's launch
    quantities and on what every thread shares."""

    array: object
    index: list  # scalar component Exprs, or one tuple Expr, or [] for a 0-d array
    value: Expr
    owned: bool
    field: object = None
    item_syntax: bool = False
    helper: object = None  # a DeviceFunction

    def index_components(self):
        """The index as scalar components (the items of a tuple index)."""
        if len(self.index) == 1 and isinstance(self.index[0].type, tuple):
            whole = self.index[0]
            return [Item(whole, k) for k in range(len(whole.type))]
        return list(self.index)

    def index_quantities(self):
        return {c.quantity for c in self.index_components() if c.quantity is not None}

    def render(self, r, indent):
        if self.helper is not None:
            arguments = [self.array.render_argument(r, self.field)]
            if self.index:
                arguments.append(self.render_index(r))
            arguments.append(self.value.render(r))
            if r.host:
                arguments = [r.launch_arguments()] + arguments
            return [f"{indent}{r.device(self.helper)}({', '.join(arguments)})"]
        return [f"{indent}{self.array.render_element(r, self.index, self.field, self.item_syntax)} = "
                f"{self.value.render(r)}"]

    def render_index(self, r):
        if len(self.index) == 1:
            return self.index[0].render(r)
        return "(" + ", ".join(c.render(r) for c in self.index) + ")"

    def helper_parameters(self):
        return ["a", "j", "v"] if self.index else ["a", "v"]

    def render_in_helper(self, r):
        index = [Parameter("j", self.index[0] if len(self.index) == 1 else TupleOf(self.index))] \
            if self.index else []
        element = self.array.render_element(r, index, self.field, self.item_syntax, name="a")
        return [f"    {element} = v"]

    def expressions(self):
        return list(self.index) + [self.value]


def statement_children(statement):
    return statement.body if isinstance(statement, (Guarded, ForRange)) else []


def walk_statements(statements):
    for statement in statements:
        yield statement
        yield from walk_statements(statement_children(statement))
