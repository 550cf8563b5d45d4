"""Drawing stores (a mixin of Generator): for a coverage cell, a plan that
realises it: the store's index (checked over every thread with the
tracer: owned or not), an output array sized from the values the index
takes, the guards of the dimensions cut short, the stored value; or a
grid-stride loop."""

import numpy as np

from .arrays import element_kind, stored_exactly
from .builders import binary, cast
from .expressions import Const, Item, LoopIndex, Scalar, Shape, TupleOf, Var, converted_range
from .statements import EarlyReturn, ForRange, Guarded, Let, Store
from .vocabulary import INT_DTYPES, INTRINSICS, UNIFORM_QUANTITIES

MAX_ELEMENTS = 4096  # in an output's view; its base may be a few times larger
VALUE_KINDS = {"int": ["int", "int", "int", "bool", "float"], "float": ["int", "float", "float", "bool"],
               "complex": ["complex", "complex", "int", "float"], "bool": ["bool", "int", "float"]}
GRID_STRIDE_SHARE = 0.12
ROW_LOOP_SHARE = 0.25
HELPER_SHARE = 0.15
EARLY_RETURN_SHARE = 0.2


class StoreGeneration:
    """Generator's drawing of stores; it uses the Generator's `random`,
    `seed`, `plain`, `launch`, `tracer`, `loop_indices`, emit(), fresh(),
    new_device(), and the launch indices, arrays and values it draws."""

    def store_plan(self, cell):
        """Stores realising `cell` = (intrinsic or None, dtype, layout, form):
        a few tries at a free plan, then one that always works."""
        for attempt in range(5):
            if self.try_plan(cell, safe=attempt >= 3):
                return
        if not self.try_plan(cell, safe=True, fallback=True):
            raise AssertionError(f"seed {self.seed}: no plan realises {cell}")

    def try_plan(self, cell, safe, fallback=False):
        r = self.random
        intrinsic, dtype, layout, form = cell
        alive = self.tracer.alive
        ndim = self.ndim_for(layout, intrinsic if form == "index" else None)
        if fallback and layout != "record" and form != "index":
            ndim = min(ndim, 1)
        grid_stride = ndim == 1 and form != "index" and not safe and r.random() < GRID_STRIDE_SHARE
        if grid_stride:
            return self.grid_stride_plan(cell)
        # The index.
        if ndim == 0:
            index = []
        elif form == "index":
            index = self.index_with(intrinsic, ndim, plain=fallback)
        elif safe or r.random() < 0.5:
            index = self.linear_plan_index(ndim)
        else:
            index = self.axes_index(ndim)
        components = Store(None, index, None, False).index_components()
        values = [self.tracer.value(c) for c in components]
        if any(v is None for v in values) or any((v[alive] < 0).any() for v in values):
            return False
        # The shape, and the guards of dimensions cut short.
        shape, short = self.output_shape([v[alive] for v in values], fallback)
        if shape is None:
            return False
        running = alive.copy()
        for dim in short:
            running &= values[dim] < shape[dim]
        single = None
        if ndim == 0 and (safe or r.random() < 0.6):
            # One thread stores into the 0-d array: `if <its global index> == k:`.
            linear = self.linear_index()
            chosen = self.tracer.value(linear)
            single = binary("==", linear, Const("int64", int(r.choice(chosen[alive]))))
            running &= self.tracer.value(single).astype(bool)
        owned = self.injective(values, running, shape)
        allowed = None if owned else frozenset(q for c in components if c.quantity is not None
                                               for q in [c.quantity]) - UNIFORM_QUANTITIES
        row = None
        if owned and ndim >= 2 and isinstance(index[-1], Const) and len(index) == len(components) and \
                not fallback and r.random() < ROW_LOOP_SHARE:
            # The last dimension (padding) becomes a row each thread fills.
            row = LoopIndex(self.fresh("g"), r.randint(2, 4))
            index, shape[-1] = index[:-1] + [row], row.length
        # The value.
        self.loop_indices += [row] if row else []
        try:
            value = self.store_value(cell, allowed, dtype)
        finally:
            self.loop_indices = [loop for loop in self.loop_indices if loop is not row]
        if value is None:
            return False
        array = self.new_output(dtype, layout, shape)
        if owned and form != "index" and not fallback and len(index) == len(components):
            index = [self.index_variant(c, array, dim) for dim, c in enumerate(index)]
        field = array.fields and next(f for f, t in array.fields if t == dtype)
        stores = [Store(array, index, value, owned, field, item_syntax=r.random() < 0.5)]
        if array.fields and len(array.fields) > 1 and r.random() < 0.4:
            other, other_type = r.choice([(f, t) for f, t in array.fields if f != field])
            other_value = self.store_value((None, other_type, layout, "value"), allowed, other_type)
            if other_value is not None:
                stores.append(Store(array, index, other_value, owned, other, item_syntax=r.random() < 0.5))
        if r.random() < HELPER_SHARE:
            store = r.choice(stores)
            store.helper = self.new_device([])
            store.helper.store = store
        self.emit_stores(stores, components, short, single, shape, row)
        return True

    def index_variant(self, component, array, dim):
        """A component of an owned store's index as it is, counted from the
        end (`i - a.shape[0]`, negative: Numba wraps it around), or in a
        narrower or unsigned integer type it fits (`np.uint8(i)`), which
        the index must then widen by its own signedness."""
        r = self.random
        pick = r.random()
        if pick < 0.1:
            return binary("-", component, Shape(array, dim))
        if pick < 0.2 and not self.plain:
            fits = [t for t in INT_DTYPES if stored_exactly(component, t)]
            return cast(r.choice(fits), component) if fits else component
        return component

    def injective(self, values, running, shape):
        keys = np.zeros(int(running.sum()), np.int64)
        for dim, v in enumerate(values):
            keys = keys * shape[dim] + v[running]
        return len(np.unique(keys)) == len(keys)

    def output_shape(self, values, fallback):
        """Each dimension covers its index's values, some with room to
        spare, some cut short (then guarded), within MAX_ELEMENTS; and the
        dimensions cut short."""
        r = self.random
        shape, short = [], []
        for dim, v in enumerate(values):
            lo, hi = int(v.min()), int(v.max())
            pick = r.random()
            if not fallback and pick < 0.25 and hi > lo:
                shape.append(r.randint(lo + 1, hi))
                short.append(dim)
            elif pick < 0.55:
                shape.append(hi + 1 + r.randint(1, 3))
            else:
                shape.append(hi + 1)
        while np.prod(shape) > MAX_ELEMENTS:
            dim = max(range(len(shape)), key=lambda d: shape[d])
            lo = int(values[dim].min())
            if shape[dim] <= lo + 1 or shape[dim] == 1:
                return None, []
            shape[dim] = max(lo + 1, shape[dim] // 2)
            if dim not in short:
                short.append(dim)
        while len(shape) >= 2 and sum(d > 1 for d in shape) < 2:
            # So that no F array is also C-contiguous (and typed C).
            shape[shape.index(1)] += 1
        return shape, sorted(short)

    def index_with(self, name, ndim, plain=False):
        """An index with intrinsic `name` as one of its components (for a
        tuple intrinsic of `ndim` components, maybe as the whole index);
        the others fill in with launch indices or constants."""
        r = self.random
        intrinsic = INTRINSICS[name]
        if intrinsic.arity == ndim and r.random() < 0.5 and not plain:
            return [self.atom(name)]
        position = r.randrange(ndim)
        index = []
        for dim in range(ndim):
            if dim == position:
                index.append(self.scalar_atom(name))
            elif plain or r.random() < 0.4:
                index.append(Const("int64", 0))
            else:
                index.append(self.random_atom())
        if ndim >= 2 and r.random() < 0.25 and not plain:
            var = Var(self.fresh(), TupleOf(index))
            self.emit(Let(var))
            return [var]
        return index

    def linear_plan_index(self, ndim):
        """An injective index: the grid's linear index (split in two, or
        padded with zeros), or the pair (thread in block, block)."""
        r = self.random
        if ndim >= 2 and r.random() < 0.25:
            return self.block_linear_indices() + [Const("int64", 0)] * (ndim - 2)
        linear = self.linear_index()
        if ndim >= 2 and r.random() < 0.5:
            width = Const("int64", r.randint(2, 9))
            return [binary("//", linear, width), binary("%", linear, width)] + [Const("int64", 0)] * (ndim - 2)
        return [linear] + [Const("int64", 0)] * (ndim - 1)

    def axes_index(self, ndim):
        """Launch indices per dimension (cuda.grid(k) as a whole, sometimes):
        injective or not, as they fall."""
        r = self.random
        if ndim in (2, 3) and r.random() < 0.4:
            return [self.atom(f"grid({ndim})")]
        return [self.random_atom() for _ in range(ndim)]

    def store_value(self, cell, allowed, dtype):
        """A value for a store into `dtype` that realises the cell's form:
        the intrinsic itself, arithmetic over it, or anything; its sources
        allowed."""
        r = self.random
        intrinsic, _, _, form = cell
        must = None
        if intrinsic is not None and form in ("value", "arithmetic"):
            quantities = INTRINSICS[intrinsic].quantities
            component = r.randrange(len(quantities)) if INTRINSICS[intrinsic].arity else None
            quantity = quantities[component or 0]
            if allowed is not None and quantity not in UNIFORM_QUANTITIES and quantity not in allowed:
                return None
            must = self.atom(intrinsic, component)
            if form == "value":
                return must
        for _ in range(4):
            kind = r.choice(VALUE_KINDS[element_kind(dtype)])
            value = self.expr(kind, r.randint(1, 3) if must is not None else r.randint(0, 3), allowed, must)
            # The launch index must end up inside arithmetic (not carried
            # as it is, by a tuple or a conditional's branch).
            if converted_range(value.range, value.type, dtype) is not None and \
                    (must is None or (intrinsic, False) in value.uses()) and \
                    (not self.plain or stored_exactly(value, dtype)):
                return value
        if must is not None:
            return binary("+", must, Const("int64", 1))
        return Const("int64", 1)

    def emit_stores(self, stores, components, short, single, shape, row=None):
        """The stores (in the loop over `row`, where given) under their
        guards: `if i < a.shape[0]:`, `if i < n:`, an early `if i >= n:
        return`, a single thread's, or none."""
        r = self.random
        array = stores[0].array
        tests = [single] if single is not None else []
        for dim in short:
            spellings = ["shape"] + ["len"] * (dim == 0) + ["size"] * (array.ndim == 1)
            limit = Shape(array, dim, r.choice(spellings)) if r.random() < 0.5 else self.new_scalar(shape[dim])
            if len(short) == 1 and single is None and r.random() < EARLY_RETURN_SHARE and \
                    self.keeps_most_threads(components[dim], limit):
                self.emit(EarlyReturn(binary(">=", components[dim], limit)))
                continue
            tests.append(binary("<", components[dim], limit))
        if not tests and components and r.random() < 0.15:
            # A guard that holds for every thread: guarded and unguarded alike.
            dim = r.randrange(len(components))
            tests.append(binary("<", components[dim], Shape(array, dim)))
        if r.random() < 0.08:
            # A condition on data, which some threads meet.
            tests.append(self.data_condition(None if stores[0].owned else
                                             frozenset().union(*(c.sources for c in components))))
        body = list(stores)
        if r.random() < 0.2:
            var = Var(self.fresh(), stores[0].value)
            stores[0].value = var
            body.insert(0, Let(var))
        if row is not None:
            stop = Const("int64", row.length) if r.random() < 0.5 else Shape(array, array.ndim - 1)
            body = [ForRange(row, Const("int64", 0), stop, Const("int64", 1), body)]
        if not tests:
            for statement in body:
                self.emit(statement)
            return
        test = tests[0]
        for more in tests[1:]:
            test = binary("and", test, more)
        self.emit(Guarded(test, body))

    def data_condition(self, allowed):
        r = self.random
        if r.random() < 0.4:
            return self.load("bool", allowed)
        kind = r.choice(["int", "float"])
        return binary(r.choice(["!=", ">", "<="]), self.load(kind, allowed), Const("int64", r.randint(-5, 5)))

    def keeps_most_threads(self, component, limit):
        values = self.tracer.value(component)
        alive = self.tracer.alive
        return (values[alive] < limit.value if isinstance(limit, Scalar) else
                values[alive] < limit.array.shape[limit.dim]).mean() >= 0.5

    def grid_stride_plan(self, cell):
        """`for k in range(<global linear index>, a.shape[0], <threads in the
        grid>): a[k] = ...`: every k belongs to one thread."""
        r = self.random
        intrinsic, dtype, layout, form = cell
        threads = self.launch.blocks * self.launch.threads
        length = threads * r.randint(1, 2) + r.randint(0, threads)
        if length > MAX_ELEMENTS * 2:
            length = threads + r.randint(0, 7)
        start = self.linear_index()
        if self.launch.environment["gridsize_y"] == 1 and self.launch.environment["gridsize_z"] == 1 and \
                r.random() < 0.6:
            step = r.choice([self.atom("gridsize(1)"), self.tuple_component("gridsize", "x"),
                             binary("*", self.atom("blockDim.x"), self.atom("gridDim.x"))])
        else:
            size = self.atom("gridsize(3)") if r.random() < 0.5 else None
            step = binary("*", binary("*", Item(size, 0) if size else self.tuple_component("gridsize", "x"),
                                      Item(size, 1) if size else self.tuple_component("gridsize", "y")),
                          Item(size, 2) if size else self.tuple_component("gridsize", "z"))
        if step is None or start is None:
            return False
        array = self.new_output(dtype, layout, (length,))
        loop_var = LoopIndex(self.fresh("g"), length)
        self.loop_indices.append(loop_var)
        try:
            value = self.store_value(cell, None, dtype)
        finally:
            self.loop_indices.pop()
        if value is None:
            return False
        field = array.fields and next(f for f, t in array.fields if t == dtype)
        store = Store(array, [loop_var], value, True, field, item_syntax=r.random() < 0.5)
        stop = Shape(array, 0) if r.random() < 0.6 else self.new_scalar(length)
        self.emit(ForRange(loop_var, start, stop, step, [store]))
        return True
