"""The store tracer: a kernel's statements run over every thread of its
launch at once, with NumPy, to find what would give the kernel more than
one meaning or take it out of bounds."""

import collections

import numpy as np

from .expressions import Binary, Load, Opaque
from .statements import EarlyReturn, ForRange, Guarded, Let, Store, Unpack


def _wrapped(index, size):
    """Indices as Numba takes them: a negative one counts from the end."""
    return np.where((index < 0) & (index >= -size), index + size, index)


def _broadcast(value, count):
    return np.broadcast_to(np.asarray(value, np.int64), (count,))


class StoreTracer:
    """Runs a kernel's statements over every thread of the launch at once,
    as far as they have values at generation time (launch indices, scalar
    parameters, shapes and the integer arithmetic over them): which
    threads are still running, which run each store and at which index,
    and each load's indices. Conditions that depend on data are taken as
    true (the threads they leave out are a subset)."""

    def __init__(self, launch):
        self.launch = launch
        self.count = len(launch.environment["thread"])
        self.env = dict(launch.environment)
        self.alive = np.ones(self.count, bool)
        self.stores = collections.defaultdict(list)  # Store -> [(mask, [index arrays])], a pair per trip
        self.loads = []  # (Load, mask, [index arrays])

    def value(self, expr):
        try:
            value = expr.evaluate(self.env)
        except Opaque:
            return None
        if isinstance(value, tuple):
            return tuple(_broadcast(v, self.count) for v in value)
        return _broadcast(value, self.count)

    def run(self, statements, mask=None):
        mask = self.alive if mask is None else mask
        for statement in statements:
            for expr in statement.expressions():
                self._loads_in(expr, mask & self.alive)
            if isinstance(statement, Let):
                self.env[statement.var.name] = self.value(statement.var.bound)
            elif isinstance(statement, Unpack):
                values = self.value(statement.tuple_expr)
                for k, var in enumerate(statement.vars):
                    self.env[var.name] = None if values is None else values[k]
            elif isinstance(statement, EarlyReturn):
                test = self.value(statement.test)
                if test is None:
                    raise ValueError("an early return must depend on launch indices alone")
                self.alive = self.alive & ~test.astype(bool)
            elif isinstance(statement, Guarded):
                self.run(statement.body, mask & self.alive & self.condition(statement.test))
            elif isinstance(statement, ForRange):
                self._loop(statement, mask & self.alive)
            elif isinstance(statement, Store):
                components = [self.value(c) for c in statement.index_components()]
                if any(c is None for c in components):
                    raise ValueError("a store's index must depend on launch indices alone")
                self.stores[statement].append((mask & self.alive, components))

    def condition(self, test):
        """The threads for which `test` may hold: all of them, where it
        depends on data (of `a and b`, where one operand does)."""
        if isinstance(test, Binary) and test.op in ("and", "or"):
            left, right = self.condition(test.left), self.condition(test.right)
            return left & right if test.op == "and" else left | right
        value = self.value(test)
        return np.ones(self.count, bool) if value is None else value.astype(bool)

    def _loop(self, loop, mask):
        start, stop, step = (self.value(e) for e in (loop.start, loop.stop, loop.step))
        if start is None or stop is None or step is None or (step <= 0).any():
            raise ValueError("a loop around stores must run over launch indices alone")
        trip = 0
        while True:
            k = start + trip * step
            running = mask & (k < stop)
            if not running.any():
                break
            self.env[loop.var.name] = k
            self.run(loop.body, running)
            trip += 1
        self.env[loop.var.name] = None

    def _loads_in(self, expr, mask):
        for node in expr.walk():
            if isinstance(node, Load) and node.index:
                components = [self.value(c) for c in node.index]
                self.loads.append((node, mask, components))

    def problems(self):
        """What makes the traced kernel have more than one meaning, or go
        out of bounds: a list of sentences, empty when none."""
        found = []
        for store, chunks in self.stores.items():
            shape = store.array.shape
            keys = []
            for mask, components in chunks:
                if not mask.any():
                    continue
                linear = np.zeros(int(mask.sum()), np.int64)
                for dim, values in enumerate(components):
                    chosen = _wrapped(values[mask], shape[dim])
                    if chosen.min() < 0 or chosen.max() >= shape[dim]:
                        found.append(f"store into {store.array.name}: index {dim} out of bounds")
                    linear = linear * shape[dim] + chosen
                keys.append(linear)
            if store.owned and keys:
                joined = np.concatenate(keys)
                if len(np.unique(joined)) != len(joined):
                    found.append(f"store into {store.array.name}: two threads store into one element")
            if not store.owned:
                quantities = store.index_quantities()
                if not store.value.sources <= quantities:
                    found.append(f"store into {store.array.name}: its value depends on "
                                 f"{sorted(store.value.sources - quantities)}, which its index does not")
        for load, mask, components in self.loads:
            if not mask.any():
                continue
            for dim, values in enumerate(components):
                if values is None:
                    found.append(f"load from {load.array.name}: index {dim} depends on data")
                    continue
                chosen = values[mask]
                if chosen.min() < 0 or chosen.max() >= load.array.shape[dim]:
                    found.append(f"load from {load.array.name}: index {dim} out of bounds")
        return found

    def runs(self, store):
        """How many times threads run `store`."""
        return sum(int(mask.sum()) for mask, _ in self.stores.get(store, []))
