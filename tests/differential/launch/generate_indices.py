"""Drawing launch indices (a mixin of Generator): an intrinsic read
inline, through a variable bound at the top of the kernel (or unpacked
from a tuple), or from a getter device function; and the injective indices
made of them."""

from .builders import binary
from .expressions import Call, Item, Read, Var
from .statements import Let, Unpack
from .vocabulary import AXES, INTRINSICS, SCALAR_ATOMS, UNIFORM_QUANTITIES


class LaunchIndexGeneration:
    """Generator's drawing of launch indices; it uses the Generator's
    `random`, `launch`, `bound`, `device_parameters`, emit(), fresh() and
    new_device()."""

    def atom(self, name, component=None):
        """An expression that is exactly intrinsic `name` (or its component
        `component`, of a tuple intrinsic): read inline, through a local
        variable (a tuple's, or one of those unpacked from it), or from a
        device function that reads it."""
        r = self.random
        intrinsic = INTRINSICS[name]
        pick = r.choices(["inline", "bound", "getter", "tuple var"], [4, 3, 0.7, 1])[0]
        if self.device_parameters is not None:
            pick = "inline"
        if pick == "bound":
            choices = self.bound.get((name, component)) or [self.bind(intrinsic, component)]
            return r.choice(choices)
        if pick == "getter":
            call = Call(self.new_device([], Read(intrinsic, self.launch)), [])
            return Item(call, component) if component is not None else call
        if pick == "tuple var" and component is not None:
            return Item(self.bind(intrinsic, None), component)
        read = Read(intrinsic, self.launch)
        return Item(read, component) if component is not None else read

    def bind(self, intrinsic, component):
        """Binds an intrinsic to a variable at the top level: `v = ...`, or
        for a component of a tuple `vx, vy = cuda.grid(2)`."""
        read = Read(intrinsic, self.launch)
        if component is None:
            var = Var(self.fresh(), read)
            self.emit(Let(var))
            self.bound.setdefault((intrinsic.name, None), []).append(var)
            return var
        names = [self.fresh() for _ in range(intrinsic.arity)]
        variables = [Var(n, Item(read, k)) for k, n in enumerate(names)]
        self.emit(Unpack(variables, read))
        for k, var in enumerate(variables):
            self.bound.setdefault((intrinsic.name, k), []).append(var)
        return variables[component]

    def scalar_atom(self, name):
        """The intrinsic, or a random component of a tuple one."""
        intrinsic = INTRINSICS[name]
        return self.atom(name, self.random.randrange(intrinsic.arity) if intrinsic.arity else None)

    def random_atom(self, allowed=None):
        """A scalar launch index that is allowed (None: any)."""
        choices = [(name, component) for name, component, quantity in SCALAR_ATOMS
                   if allowed is None or quantity in UNIFORM_QUANTITIES or quantity in allowed]
        return self.atom(*self.random.choice(choices))

    def linear_index(self):
        """Each thread's index in the whole grid (injective): the global
        index of x in a launch with one thread per x, else `gx + sx * (gy +
        sy * gz)` of launch indices in any of their forms."""
        r = self.random
        env = self.launch.environment
        one_row = env["gridsize_y"] == 1 and env["gridsize_z"] == 1
        globals_ = {axis: [n for n, i in INTRINSICS.items() if i.quantities == (f"global_{axis}",)] for axis in AXES}
        sizes = {axis: [n for n, i in INTRINSICS.items() if i.quantities == (f"gridsize_{axis}",)] for axis in AXES}

        def global_of(axis):
            if r.random() < 0.6:
                return self.atom(r.choice(globals_[axis]))
            return self.tuple_component("grid", axis)

        def size_of(axis):
            pick = r.random()
            if pick < 0.3 and sizes[axis]:
                return self.atom(r.choice(sizes[axis]))
            if pick < 0.7:
                return self.tuple_component("gridsize", axis)
            return binary("*", self.atom(f"blockDim.{axis}"), self.atom(f"gridDim.{axis}"))

        if one_row and r.random() < 0.8:
            return global_of("x")
        index = global_of("x")
        if env["gridsize_y"] > 1 or env["gridsize_z"] > 1:
            inner = global_of("y")
            if env["gridsize_z"] > 1:
                inner = binary("+", inner, binary("*", size_of("y"), global_of("z")))
            index = binary("+", index, binary("*", size_of("x"), inner))
        return index

    def tuple_component(self, family, axis):
        """Component `axis` of cuda.grid(k) or cuda.gridsize(k), k drawn."""
        k = AXES.index(axis)
        arity = self.random.choice([n for n in (2, 3) if n > k])
        return self.atom(f"{family}({arity})", k)

    def block_linear_indices(self):
        """(the thread's index in its block, its block's index in the grid):
        injective together."""
        thread = binary("+", self.atom("threadIdx.x"), binary("*", self.atom("blockDim.x"), binary(
            "+", self.atom("threadIdx.y"), binary("*", self.atom("blockDim.y"), self.atom("threadIdx.z")))))
        block = binary("+", self.atom("blockIdx.x"), binary("*", self.atom("gridDim.x"), binary(
            "+", self.atom("blockIdx.y"), binary("*", self.atom("gridDim.y"), self.atom("blockIdx.z")))))
        return [thread, block]
