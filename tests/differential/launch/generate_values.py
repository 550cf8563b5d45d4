"""Drawing values (a mixin of Generator): expressions of a kind ("int",
"float", "bool", "complex") in many shapes, made of allowed launch
indices and holding a given one where asked; loads from inputs, scalar
parameters, tuples and device functions among them."""

from .arrays import element_kind
from .builders import binary, builtin, cast, choose, unary
from .expressions import Call, Const, Item, Load, Parameter, Part, Scalar, Shape, TupleOf
from .numba_typing import COMPARISONS, kind_of
from .vocabulary import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES

DTYPES_OF_KIND = {"int": INT_DTYPES, "float": FLOAT_DTYPES, "complex": COMPLEX_DTYPES, "bool": ("bool",)}
# The types of a plain program's values (see PLAIN_SHARE).
PLAIN_DTYPES = {"int": "int64", "float": "float64", "complex": "complex128", "bool": "bool"}


class ValueGeneration:
    """Generator's drawing of values; it uses the Generator's `random`,
    `plain`, `arrays`, `scalars`, `device_parameters` (set while a device
    function's body is drawn), `loop_indices`, fresh(), new_device(), the
    launch indices and the inputs."""

    def split(self, must, count):
        """`must` at one random position of `count`, None elsewhere."""
        musts = [None] * count
        if must is not None:
            musts[self.random.randrange(count)] = must
        return musts

    def expr(self, kind, depth, allowed=None, must=None):
        """An expression of `kind` ("int", "float", "bool", "complex") whose
        sources are allowed (None: any), with `must` (a launch index) inside
        it where given."""
        for _ in range(6):
            node = self.shape(kind, depth, allowed, must)
            if node is not None and kind_of(node.type) == kind and (allowed is None or node.sources <= allowed):
                return node
        return self.simple(kind, allowed, must)

    def simple(self, kind, allowed, must):
        """What always works: a launch index (or 1) of `kind`."""
        base = must if must is not None else Const("int64", 1)
        if kind == "int":
            return binary("+", base, Const("int64", 1)) if must is not None else base
        if kind == "float":
            return cast("float64", base)
        if kind == "bool":
            return binary("<", base, Const("int64", 3))
        return builtin("complex", [base, Const("int64", 1)])

    def leaf(self, kind, allowed, must):
        r = self.random
        if must is not None:
            return self.coerce(must, kind)
        parameters = [p for p in self.device_parameters or [] if kind_of(p.type) == kind]
        if parameters and r.random() < 0.6:
            return r.choice(parameters)
        if kind == "int":
            pick = r.random()
            if self.loop_indices and pick < 0.2 and self.device_parameters is None:
                return self.loop_indices[-1]
            if pick < 0.55:
                return self.random_atom(allowed)
            if pick < 0.65 and self.device_parameters is None:
                return self.scalar_or_shape()
            if pick < 0.8 and self.device_parameters is None:
                return self.load("int", allowed)
            return Const("int64", r.choice([0, 1, 2, 3, 5, 7, 31, 100, -1, -6]))
        if kind == "float":
            if r.random() < 0.5 and self.device_parameters is None:
                return self.load("float", allowed)
            return Const("float64", r.choice([0.5, -1.25, 3.0, 0.25, 2.0, -0.0]))
        if kind == "bool":
            if r.random() < 0.4 and self.device_parameters is None:
                return self.load("bool", allowed)
            return binary(r.choice(COMPARISONS), self.random_atom(allowed), Const("int64", r.randint(0, 40)))
        if r.random() < 0.5 and self.device_parameters is None:
            return self.load("complex", allowed)
        return builtin("complex", [self.random_atom(allowed), Const("float64", r.choice([1.0, -0.5]))])

    def scalar_or_shape(self):
        r = self.random
        arrays = [a for a in self.arrays if a.ndim]
        if arrays and r.random() < 0.5:
            array = r.choice(arrays)
            return Shape(array, r.randrange(array.ndim))
        return self.new_scalar(r.randint(1, 50))

    def some_type(self, kind):
        """A type to convert to, of `kind`: any, or in a plain program the
        simulator's."""
        return PLAIN_DTYPES[kind] if self.plain else self.random.choice(DTYPES_OF_KIND[kind])

    def new_scalar(self, value):
        dtype = "int64" if self.plain else self.random.choice(["int64", "int64", "int32"])
        scalar = Scalar(self.fresh("n"), dtype, value)
        self.scalars.append(scalar)
        return scalar

    def coerce(self, must, kind):
        """A launch index as a leaf of `kind`."""
        r = self.random
        if kind == "int":
            return must
        if kind == "float":
            return cast(self.some_type("float"), must)
        if kind == "bool":
            return binary(r.choice(COMPARISONS), must, Const("int64", r.randint(0, 40)))
        return builtin("complex", [must, Const("int64", r.randint(-3, 3))])

    def nonzero(self, expr):
        """`expr`, or a value like it that cannot be zero."""
        if expr is None or expr.range is None or not (expr.range.lo <= 0 <= expr.range.hi):
            return expr
        if kind_of(expr.type) == "int":
            return binary("|", expr, Const("int64", 1))
        return binary("+", unary("abs", expr), Const("float64", 1.0))

    def shape(self, kind, depth, allowed, must):
        if depth <= 0 or self.random.random() < 0.2:
            return self.leaf(kind, allowed, must)
        return getattr(self, f"{kind}_shape")(depth, allowed, must)

    def int_shape(self, depth, allowed, must):
        r = self.random

        def sub(kind, m=None):
            return self.expr(kind, depth - 1, allowed, m)
        shape = r.choice(["affine", "binary", "binary", "shift", "minmax", "unary", "cast", "choose", "call",
                          "tuple", "from float", "bool sum", "load"])
        if shape == "affine":  # (i * 3 + 7) // 2
            scaled = binary("*", sub("int", must), Const("int64", r.choice([3, 5, -2, 7])))
            shifted = binary("+", scaled, Const("int64", r.choice([7, -1, 0, 11])))
            return binary("//", shifted, Const("int64", r.choice([2, 3, 4, 7, -3])))
        if shape == "binary":
            op = r.choice(["+", "-", "*", "//", "%", "&", "|", "^"])
            first, second = self.split(must, 2)
            right = sub("int", second) if second is not None or r.random() < 0.6 else \
                Const("int64", r.choice([1, 2, 3, 5, 7, 31, -4]))
            if op in ("//", "%"):
                right = self.nonzero(right)
            return binary(op, sub("int", first), right)
        if shape == "shift":
            first, second = self.split(must, 2)
            op = r.choice(["<<", ">>"])
            count = binary("&", sub("int", second), Const("int64", 15 if op == "<<" else 31))
            return binary(op, sub("int", first), count)
        if shape == "minmax":
            first, second = self.split(must, 2)
            return builtin(r.choice(["min", "max"]), [sub("int", first), sub("int", second)])
        if shape == "unary":
            op = r.choice(["neg", "~", "abs"])
            operand = sub("int", must)
            if op == "abs":
                operand = binary("-", operand, Const("int64", r.randint(0, 20)))
            return unary(op, operand)
        if shape == "cast":
            return cast(self.some_type("int"), sub("int", must))
        if shape == "choose":
            test, then, otherwise = self.split(must, 3)
            return choose(sub("bool", test), sub("int", then), sub("int", otherwise))
        if shape == "call":
            return self.device_call("int", depth, allowed, must)
        if shape == "tuple":
            return self.tuple_item("int", depth, allowed, must)
        if shape == "from float":
            return cast(self.some_type("int"), sub("float", must))
        if shape == "bool sum" and not self.plain:  # NumPy's bools add as bools
            first, second = self.split(must, 2)
            return binary("+", sub("bool", first), sub("bool", second))
        return self.load("int", allowed, must) if self.device_parameters is None else None

    def float_shape(self, depth, allowed, must):
        r = self.random

        def sub(kind, m=None):
            return self.expr(kind, depth - 1, allowed, m)
        shape = r.choice(["convert", "divide", "binary", "scale", "product", "floor", "minmax", "unary",
                          "choose", "part", "half", "affine", "call", "load"])
        first, second = self.split(must, 2)
        if shape == "convert":
            return cast(self.some_type("float"), sub(r.choice(["int", "float"]), must))
        if shape == "divide":  # i / 3
            return binary("/", sub("int", first), self.nonzero(sub("int", second)))
        if shape == "binary":
            return binary(r.choice(["+", "-"]), sub("float", first), sub(r.choice(["float", "int"]), second))
        if shape == "scale":
            return binary("*", sub("float", must), Const("float64", r.choice([0.5, 2.0, 0.25, -1.0, 1.5, 3.0])))
        if shape == "product":
            return binary("*", sub("float", first), sub(r.choice(["float", "int"]), second))
        if shape == "floor":
            return binary(r.choice(["//", "%"]), sub("float", first), self.nonzero(sub(r.choice(["float", "int"]),
                                                                                       second)))
        if shape == "minmax":
            return builtin(r.choice(["min", "max"]), [sub("float", first), sub("float", second)])
        if shape == "unary":
            return unary(r.choice(["neg", "abs"]), sub("float", must))
        if shape == "choose":
            test, then, otherwise = self.split(must, 3)
            return choose(sub("bool", test), sub("float", then), sub("float", otherwise))
        if shape == "part":
            return Part(sub("complex", must), r.choice(["real", "imag"]))
        if shape == "half" and not self.plain:  # float16 arithmetic
            op = r.choice(["+", "-", "*"])
            right = cast("float16", sub(r.choice(["int", "float"]), second)) if second is not None or \
                r.random() < 0.5 else cast("float16", Const("float64", r.choice([0.5, 2.0, -1.5])))
            return binary(op, cast("float16", sub(r.choice(["int", "float"]), first)), right)
        if shape == "affine":  # i * 0.5 + 1.25
            return binary("+", binary("*", sub("float", must), Const("float64", 0.5)), Const("float64", 1.25))
        if shape == "call":
            return self.device_call("float", depth, allowed, must)
        return self.load("float", allowed, must) if self.device_parameters is None else None

    def bool_shape(self, depth, allowed, must):
        r = self.random

        def sub(kind, m=None):
            return self.expr(kind, depth - 1, allowed, m)
        shape = r.choice(["compare", "compare", "parity", "not", "and or", "load"])
        first, second = self.split(must, 2)
        if shape == "compare":
            kind = r.choice(["int", "int", "float"])
            return binary(r.choice(COMPARISONS), sub(kind, first), sub(kind, second))
        if shape == "parity":  # i % 2 == 1
            return binary("==", binary("%", sub("int", must), Const("int64", r.choice([2, 3]))), Const("int64", 1))
        if shape == "not":
            return unary("not", sub("bool", must))
        if shape == "and or":
            return binary(r.choice(["and", "or"]), sub("bool", first), sub("bool", second))
        return self.load("bool", allowed, must) if self.device_parameters is None else None

    def complex_shape(self, depth, allowed, must):
        r = self.random

        def sub(kind, m=None):
            return self.expr(kind, depth - 1, allowed, m)
        shape = r.choice(["build", "build", "binary", "scale", "neg", "load"])
        first, second = self.split(must, 2)
        if shape == "build":  # complex(i, 1)
            return builtin("complex", [sub(r.choice(["int", "float"]), first), sub(r.choice(["int", "float"]),
                                                                                     second)])
        if shape == "binary":
            return binary(r.choice(["+", "-"]), sub("complex", first), sub(r.choice(["complex", "int", "float"]),
                                                                           second))
        if shape == "scale":
            return binary("*", sub("complex", must), Const("int64", r.choice([2, -1, 3])))
        if shape == "neg":
            return unary("neg", sub("complex", must))
        return self.load("complex", allowed, must) if self.device_parameters is None else None

    def tuple_item(self, kind, depth, allowed, must):
        """`(a, b)[k]`: a tuple built and indexed."""
        r = self.random
        count = r.randint(2, 3)
        chosen = r.randrange(count)
        elements = [self.expr(kind if k == chosen else r.choice(["int", "float", "bool"]), depth - 1, allowed,
                              must if k == chosen else None) for k in range(count)]
        return Item(TupleOf(elements), chosen)

    def device_call(self, kind, depth, allowed, must):
        """A device function of one or two arguments, whose body may read
        launch indices itself."""
        if self.device_parameters is not None:
            return None
        r = self.random
        count = r.randint(1, 2)
        musts = self.split(must, count)
        arguments = [self.expr(r.choice(["int", "int", "float"]), depth - 1, allowed, m) for m in musts]
        parameters = [Parameter(f"p{k}", a) for k, a in enumerate(arguments)]
        self.device_parameters = parameters
        try:
            body = self.expr(kind, max(depth - 1, 1), allowed)
        finally:
            self.device_parameters = None
        return Call(self.new_device(parameters, body), arguments)

    # Loads from inputs.

    def load(self, kind, allowed, must=None):
        """An element of an input of `kind`, at launch indices (allowed
        ones): directly where they stay in bounds, else modulo the
        dimension."""
        if self.device_parameters is not None:
            return None
        r = self.random
        array = self.input_of_kind(kind)
        fields = [f for f, t in array.fields if element_kind(t) == kind] if array.fields else [None]
        field = r.choice(fields)
        if array.ndim == 0:
            return Load(array, [], field) if must is None else None
        position = r.randrange(array.ndim)
        index = []
        for dim, size in enumerate(array.shape):
            if dim == position and must is not None:
                component = must
            elif r.random() < 0.7:
                component = self.random_atom(allowed)
            else:
                component = Const("int64", r.randrange(size))
            if component.range.hi >= size:
                component = binary("%", component, Const("int64", size))
            index.append(component)
        return Load(array, index, field, item_syntax=r.random() < 0.5)
