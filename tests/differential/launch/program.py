"""A generated program (Program): what the harness asks of it (its two
renderings, signature, launch, fresh arguments, run_host, coverage, and
whether Numba's simulator may judge it); and check_program(), which
checks a finished program's single meaning again."""

import collections

import numpy as np

from .arrays import ArrayParam, run_write_backs, stored_exactly
from .coverage import program_cells
from .expressions import (Binary, Call, Const, DeviceFunction, Item, Load, LoopIndex, Parameter, Read, Renderer,
                          Scalar, Shape, TupleOf, Unary, Var)
from .numba_typing import COMPARISONS, kind_of
from .statements import Store, walk_statements
from .tracer import StoreTracer
from .vocabulary import LAUNCH_PARAMETERS

FLOAT16_HELPER = '''\
@njit
def {name}_f16(x):
    """x rounded to the nearest float16 (ties to even), as a float64: the
    GPU's float16 results and conversions, which Numba's CPU target lacks."""
    a = abs(x)
    if a != a or a == 0.0 or a == math.inf:
        return x
    if a >= 65520.0:
        return math.copysign(math.inf, x)
    ulp = math.ldexp(1.0, max(math.frexp(a)[1] - 11, -24))
    units = a / ulp
    whole = math.floor(units)
    if units - whole > 0.5 or (units - whole == 0.5 and whole % 2.0 == 1.0):
        whole += 1.0
    return math.copysign(whole * ulp, x)
'''

# What the simulator computes as compiled Numba does: Python ints and
# floats, and NumPy scalars of these types (NumPy 2 keeps narrower types
# narrow, and float32 with a Python float float32).
SIMULATOR_TYPES = ("int64", "float64", "bool", "complex128")


class Program:
    """One generated program: see launch_programs.py's docstring, and
    oracles.py for how the harness runs it."""

    # The module whose generate() makes the program again, which the
    # harness's child processes import (oracles.generator_of): the entry,
    # not this class's own module, which has no generate().
    generator = "launch_programs"

    def __init__(self, seed, launch, parameters, devices, statements, focus):
        self.seed = seed
        self.launch_shape = launch
        self.parameters = parameters
        self.devices = devices
        self.statements = statements
        self.focus = focus
        self.blocks = launch.blocks
        self.threads = launch.threads
        self.signature = "void(" + ", ".join(
            p.signature() if isinstance(p, ArrayParam) else p.type for p in parameters) + ")"
        self.cells = frozenset(program_cells(statements))
        self.simulator_judges = simulator_agrees(self)

    def launch(self):
        """(grid, block), as `kernel[grid, block]` takes them."""
        return self.launch_shape.configuration()

    def coverage(self):
        return set(self.cells)

    def render(self, name, host=False):
        r = Renderer(name, host)
        lines = []
        for device in self.devices:
            lines += device.render(r) + [""]
        if host:
            names = [n for p in self.parameters for n in (p.host_names() if isinstance(p, ArrayParam) else [p.name])]
            lines += ["@njit", f"def {name}({', '.join(LAUNCH_PARAMETERS + tuple(names))}):"]
        else:
            lines += [f'@cuda.jit("{self.signature}")', f"def {name}({', '.join(p.name for p in self.parameters)}):"]
        lines += [line for statement in self.statements for line in statement.render(r, "    ")]
        text = "\n".join(lines) + "\n"
        if host:
            helper = FLOAT16_HELPER.format(name=name) + "\n" if f"{name}_f16(" in text else ""
            text = "import math\n\n" + helper + text
        return text

    def arguments(self):
        """Fresh (kernel arguments, {name: output base array})."""
        arguments, outputs = [], {}
        for parameter in self.parameters:
            if isinstance(parameter, Scalar):
                arguments.append(np.dtype(parameter.type).type(parameter.value))
                continue
            argument, base = parameter.build()
            arguments.append(argument)
            if parameter.output:
                outputs[parameter.name] = base
        return arguments, outputs

    def run_host(self, function, arguments):
        """Runs the host rendering's kernel `function` for every thread of
        the launch, in order, over `arguments` (as arguments() made them)."""
        host, write_backs = [], []
        for parameter, argument in zip(self.parameters, arguments):
            if isinstance(parameter, Scalar):
                host.append(argument)
                continue
            parts, backs = parameter.host_arguments(argument)
            host += parts
            write_backs += backs
        dimensions = [np.int32(v) for v in self.launch_shape.padded(self.launch_shape.block)
                      + self.launch_shape.padded(self.launch_shape.grid)]
        for tid, ctaid in self.launch_shape.points():
            function(*[np.int32(v) for v in tid], *[np.int32(v) for v in ctaid], *dimensions, *host)
        run_write_backs(write_backs)

    def expressions(self):
        """Every expression node of the kernel and its device functions."""
        for statement in walk_statements(self.statements):
            for expr in statement.expressions():
                yield from expr.walk()
        for device in self.devices:
            if device.body is not None:
                yield from device.body.walk()


def simulator_agrees(program):
    """Whether Numba's simulator computes what compiled Numba does: only
    where every value is a Python int or float (launch indices are, in the
    simulator) or a NumPy int64, float64, bool or complex128, no bool is
    added or negated (NumPy's bools stay bools), min and max take one type,
    every integer stored fits its array (NumPy 2 refuses a Python int out
    of range), no structured array is written (the simulator's records
    take no attribute stores) and every array is contiguous (it copies no
    other to its device)."""
    if any(isinstance(p, ArrayParam) and (p.fields is not None or not p.view.contiguous())
           for p in program.parameters):
        return False
    if any(isinstance(p, Scalar) and p.type not in SIMULATOR_TYPES for p in program.parameters):
        return False
    for node in program.expressions():
        if isinstance(node, (Read, Var, Item, TupleOf, Parameter, LoopIndex, Shape)) or \
                isinstance(node, Call) and isinstance(node.function, DeviceFunction):
            continue
        if isinstance(node, Const) and node.type in SIMULATOR_TYPES:
            continue
        if isinstance(node, Load):
            if node.type not in SIMULATOR_TYPES:
                return False
            continue
        if node.type not in SIMULATOR_TYPES and node.type != "int32":
            return False
        operands = node.children()
        if isinstance(node, (Binary, Unary)) and node.op not in COMPARISONS + ("and", "or", "not") and \
                any(o.type == "bool" for o in operands):
            return False
        if isinstance(node, Call) and node.function in ("min", "max") and \
                len({kind_of(o.type) for o in operands}) > 1:
            return False
    return all(stored_exactly(s.value, s.array.element_type(s.field))
               for s in walk_statements(program.statements) if isinstance(s, Store))


def check_program(program):
    """What makes `program` have more than one meaning (races, indices out
    of bounds, a store's value depending on what its index does not), found
    by running its statements over every thread again; and any array or
    field with more than one store statement. Empty when none."""
    tracer = StoreTracer(program.launch_shape)
    tracer.run(program.statements)
    problems = tracer.problems()
    targets = collections.Counter((id(s.array), s.field) for s in walk_statements(program.statements)
                                  if isinstance(s, Store))
    problems += [f"{count} store statements into one array or field" for count in targets.values() if count > 1]
    return problems
