"""Random kernels over datetime64 and timedelta64 values.

Each program reads arrays of datetimes and timedeltas of a few units, an
int64 and a float array (with NaT, NaN and zeros among the values) and
stores, per thread, random expressions of every operation Numba types for
them into output arrays of the result's type:

    d ± t, t + d, d - d, t ± t, t * n, n * t, t / n, t // n, t / t,
    -t, abs(t), comparisons of datetimes and of timedeltas, np.isnat(x),
    np.int64(x), and the conditional `a if test else b` over them

where units differ (years and months meet days and finer units through the
calendar) and NaT reaches every operation. Types and units come from
Numba's own rules (numba.np.npdatetime_helpers), so that the generator
states no rule of Kiln's. A program's units are a window of three adjacent
units, so that converted values stay far from int64's limits, where a
float converted back to a timedelta would be undefined.

The program renders as the CUDA kernel, and as an `@numba.njit` function
of the thread index that gives Numba's compiled semantics (the harness's
oracle, oracles.py), which run_host calls for every thread. Numba's
simulator computes with NumPy, whose float32 scaling of a timedelta
differs from Numba's; it judges none of these programs.
"""

import random

import numpy as np
from numba.np import npdatetime_helpers as helpers

N = 64
BLOCKS, THREADS = 2, 40  # more threads than elements: the guard matters
UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us"]
NAT = np.iinfo(np.int64).min
COMPARISONS = ["==", "!=", "<", "<=", ">", ">="]
INPUTS = ["d0", "d1", "t0", "t1", "n", "x"]


def combine(datetime_unit, timedelta_unit):
    return helpers.combine_datetime_timedelta_units(datetime_unit, timedelta_unit)


def compatible(a, b):
    return helpers.can_cast_timedelta_units(a, b) or helpers.can_cast_timedelta_units(b, a)


def finer_convertible(a, b):
    """The unit t(a) ± t(b) has, or None."""
    if helpers.can_cast_timedelta_units(a, b):
        return b
    if helpers.can_cast_timedelta_units(b, a):
        return a
    return None


class Program:
    """One generated program: see the module's docstring, and oracles.py
    for how the harness runs it."""

    generator = "datetime_programs"
    simulator_judges = False

    def __init__(self, seed, units, float_type, stores, cells):
        self.seed = seed
        self.units = units  # d0, d1, t0, t1
        self.float_type = float_type
        self.stores = stores  # [(output dtype, expression text)]
        self.cells = cells
        inputs = [f"NPDatetime('{units[0]}')", f"NPDatetime('{units[1]}')",
                  f"NPTimedelta('{units[2]}')", f"NPTimedelta('{units[3]}')", "int64", float_type]
        outputs = [numba_spelling(dtype) for dtype, _ in stores]
        self.signature = "void(" + ", ".join(f"{t}[::1]" for t in inputs + outputs) + ")"

    def launch(self):
        return BLOCKS, THREADS

    def coverage(self):
        return set(self.cells)

    def parameters(self):
        return INPUTS + [f"out{k}" for k in range(len(self.stores))]

    def render(self, name, host=False):
        parameters = ", ".join(self.parameters())
        if host:
            lines = ["@njit", f"def {name}(t, {parameters}):", "    if True:"]
        else:
            lines = [f'@cuda.jit("{self.signature}")', f"def {name}({parameters}):",
                     "    t = cuda.grid(1)", f"    if t < {N}:"]
        lines += [f"        out{k}[t] = {expression}" for k, (_, expression) in enumerate(self.stores)]
        return "\n".join(lines) + "\n"

    def arguments(self):
        """Fresh (kernel arguments, {name: output array})."""
        values = np.random.default_rng(self.seed)

        def counts(low, high):
            c = values.integers(low, high, N)
            c[values.random(N) < 0.12] = NAT
            return c

        spans = {"Y": 300, "M": 3600, "W": 20000}
        arguments = [counts(-spans.get(u, 10**6), spans.get(u, 10**6)).view(f"M8[{u}]") for u in self.units[:2]]
        arguments += [counts(-spans.get(u, 10**6), spans.get(u, 10**6)).view(f"m8[{u}]") for u in self.units[2:]]
        numbers = values.integers(-6, 7, N)
        arguments.append(numbers.astype(np.int64))
        floats = (values.integers(-40, 41, N) / 4).astype(self.float_type)
        floats[values.random(N) < 0.1] = np.nan
        arguments.append(floats)
        outputs = {}
        for k, (dtype, _) in enumerate(self.stores):
            out = np.full(N, 0x5A, np.uint8).repeat(np.dtype(dtype).itemsize).view(dtype)
            outputs[f"out{k}"] = out
            arguments.append(out)
        return arguments, outputs

    def run_host(self, function, arguments):
        for t in range(N):
            function(t, *arguments)


def numba_spelling(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "Mm":
        unit = np.datetime_data(dtype)[0]
        return f"{'NPDatetime' if dtype.kind == 'M' else 'NPTimedelta'}('{unit}')"
    return "boolean" if dtype == np.bool_ else dtype.name


class Generator:
    def __init__(self, seed):
        self.random = random.Random(seed)
        r = self.random
        first = r.randint(0, len(UNITS) - 3)
        window = UNITS[first:first + 3]
        self.units = [r.choice(window) for _ in range(4)]
        self.float_type = r.choice(["float64", "float64", "float32"])
        self.cells = []

    def expression(self, kind, depth):
        """(text, type) of a random expression of `kind`: "M" (a datetime),
        "m" (a timedelta), "f" (a float), "b" (a bool) or "i" (an int64);
        a type is ("M", unit), ("m", unit), "float64", "bool" or "int64"."""
        r = self.random
        leaf = depth <= 0 or r.random() < 0.3
        makers = {"M": self.datetime, "m": self.timedelta, "f": self.real, "b": self.truth, "i": self.count}
        return makers[kind](depth, leaf)

    def note(self, operation, *types):
        self.cells.append((operation,) + tuple(t if isinstance(t, str) else f"{t[0]}8[{t[1]}]" for t in types))

    def conditional(self, kind, depth):
        """`a if test else b` when both sides have one type, else None."""
        a, a_type = self.expression(kind, depth - 1)
        b, b_type = self.expression(kind, depth - 1)
        if a_type != b_type:
            return None
        test, _ = self.truth(depth - 1, False)
        self.note("if-else", a_type)
        return f"({a} if {test} else {b})", a_type

    def datetime(self, depth, leaf):
        r = self.random
        leaf = leaf or depth <= 0
        if not leaf:
            for _ in range(4):
                choice = r.random()
                if choice < 0.15:
                    made = self.conditional("M", depth)
                    if made:
                        return made
                    continue
                d, d_type = self.datetime(depth - 1, r.random() < 0.5)
                t, t_type = self.timedelta(depth - 1, r.random() < 0.5)
                unit = combine(d_type[1], t_type[1])
                if unit is None:
                    continue
                operator = r.choice(["+", "-", "r+"])
                self.note(operator, d_type, t_type)
                if operator == "r+":
                    return f"({t} + {d})", ("M", unit)
                return f"({d} {operator} {t})", ("M", unit)
        name = r.choice(["d0", "d1"])
        return f"{name}[t]", ("M", self.units[0 if name == "d0" else 1])

    def timedelta(self, depth, leaf):
        r = self.random
        leaf = leaf or depth <= 0
        if not leaf:
            for _ in range(4):
                choice = r.random()
                if choice < 0.1:
                    made = self.conditional("m", depth)
                    if made:
                        return made
                    continue
                if choice < 0.3:
                    a, a_type = self.timedelta(depth - 1, r.random() < 0.5)
                    b, b_type = self.timedelta(depth - 1, r.random() < 0.5)
                    unit = finer_convertible(a_type[1], b_type[1])
                    if unit is None:
                        continue
                    operator = r.choice(["+", "-"])
                    self.note(operator, a_type, b_type)
                    return f"({a} {operator} {b})", ("m", unit)
                if choice < 0.45:
                    a, a_type = self.datetime(depth - 1, r.random() < 0.5)
                    b, b_type = self.datetime(depth - 1, r.random() < 0.5)
                    self.note("-", a_type, b_type)
                    return f"({a} - {b})", ("m", helpers.get_best_unit(a_type[1], b_type[1]))
                a, a_type = self.timedelta(depth - 1, r.random() < 0.6)
                if choice < 0.55:
                    operator = r.choice(["-", "abs"])
                    self.note(operator, a_type)
                    return (f"(-{a})" if operator == "-" else f"abs({a})"), a_type
                number, number_type = (self.count(depth - 1, True) if r.random() < 0.5
                                       else self.real(depth - 1, True))
                operator = r.choice(["*", "r*", "/", "//"])
                self.note(operator, a_type, number_type)
                if operator == "r*":
                    return f"({number} * {a})", a_type
                return f"({a} {operator} {number})", a_type
        name = r.choice(["t0", "t1"])
        return f"{name}[t]", ("m", self.units[2 if name == "t0" else 3])

    def real(self, depth, leaf):
        r = self.random
        leaf = leaf or depth <= 0
        if not leaf:
            for _ in range(3):
                a, a_type = self.timedelta(depth - 1, r.random() < 0.5)
                b, b_type = self.timedelta(depth - 1, r.random() < 0.5)
                if compatible(a_type[1], b_type[1]):
                    self.note("/", a_type, b_type)
                    return f"({a} / {b})", "float64"
        return "x[t]", self.float_type

    def truth(self, depth, leaf):
        r = self.random
        leaf = leaf or depth <= 0
        if not leaf:
            for _ in range(3):
                kind = r.choice(["M", "m", "isnat"])
                if kind == "isnat":
                    a, a_type = self.expression(r.choice(["M", "m"]), depth - 1)
                    self.note("isnat", a_type)
                    return f"np.isnat({a})", "bool"
                a, a_type = self.expression(kind, depth - 1)
                b, b_type = self.expression(kind, depth - 1)
                if kind == "m" and not compatible(a_type[1], b_type[1]):
                    continue
                operator = r.choice(COMPARISONS)
                self.note(operator, a_type, b_type)
                return f"({a} {operator} {b})", "bool"
        return "(n[t] > 0)", "bool"

    def count(self, depth, leaf):
        r = self.random
        leaf = leaf or depth <= 0
        if not leaf and r.random() < 0.5:
            a, a_type = self.expression(r.choice(["M", "m"]), depth - 1)
            self.note("int64", a_type)
            return f"np.int64({a})", "int64"
        return "n[t]", "int64"

    def program(self, seed):
        r = self.random
        stores = []
        for _ in range(r.randint(2, 5)):
            kind = r.choice(["M", "M", "m", "m", "m", "f", "b", "i"])
            text, result = self.expression(kind, r.randint(1, 3))
            dtype = f"{result[0]}8[{result[1]}]" if isinstance(result, tuple) else result
            stores.append((dtype, text))
        return Program(seed, self.units, self.float_type, stores, self.cells)


def generate(seed):
    return Generator(seed).program(seed)
