"""The vocabulary of coverage: the dtypes, layouts and forms a coverage
cell names, and every launch-index intrinsic and form (Intrinsic), with
the launch quantities it is made of and its text in the kernel and in the
host rendering."""

import dataclasses

AXES = ("x", "y", "z")
DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "bool")
LAYOUTS = ("C", "F", "A", "0-d", "strided view", "record")
FORMS = ("index", "value", "arithmetic")
INT_DTYPES = DTYPES[:8]
FLOAT_DTYPES = ("float16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")

# The launch-index quantities every intrinsic is made of, as PTX names them;
# the host kernel takes the first twelve as parameters, in this order.
LAUNCH_PARAMETERS = tuple(f"{register}_{axis}" for register in ("tid", "ctaid", "ntid", "nctaid")
                          for axis in AXES)
# Quantities every thread of a launch shares: a value made only of these
# (and of constants and inputs) is the same in every thread.
UNIFORM_QUANTITIES = frozenset([f"ntid_{a}" for a in AXES] + [f"nctaid_{a}" for a in AXES]
                               + [f"gridsize_{a}" for a in AXES] + ["warpsize"])


@dataclasses.dataclass(frozen=True)
class Intrinsic:
    """One launch-index intrinsic or form. `quantities` names what each
    component is (a tuple intrinsic has several); `source` and `host` are
    its text in the kernel and in the host rendering."""

    name: str
    source: str
    host: str
    type: object  # "int32", "int64", or a tuple of component types
    quantities: tuple

    @property
    def arity(self):
        return len(self.type) if isinstance(self.type, tuple) else 0


def _global(axis, order):
    """A hand-written global index of `axis`, in one of three operand orders."""
    b, d, t = f"cuda.blockIdx.{axis}", f"cuda.blockDim.{axis}", f"cuda.threadIdx.{axis}"
    hb, hd, ht = f"ctaid_{axis}", f"ntid_{axis}", f"tid_{axis}"
    text = {"block first": (f"({b} * {d} + {t})", f"({hb} * {hd} + {ht})"),
            "thread first": (f"({t} + {d} * {b})", f"({ht} + {hd} * {hb})"),
            "dim first": (f"({d} * {b} + {t})", f"({hd} * {hb} + {ht})")}[order]
    return Intrinsic(f"global {axis} ({order})", *text, "int64", (f"global_{axis}",))


def _intrinsics():
    found = []
    for register, attribute in (("tid", "threadIdx"), ("ctaid", "blockIdx"), ("ntid", "blockDim"),
                                ("nctaid", "gridDim")):
        for axis in AXES:
            found.append(Intrinsic(f"{attribute}.{axis}", f"cuda.{attribute}.{axis}", f"{register}_{axis}",
                                   "int32", (f"{register}_{axis}",)))
    for n in (1, 2, 3):
        globals_ = [f"(ctaid_{a} * ntid_{a} + tid_{a})" for a in AXES[:n]]
        sizes = [f"(ntid_{a} * nctaid_{a})" for a in AXES[:n]]
        scalar = n == 1
        found.append(Intrinsic(f"grid({n})", f"cuda.grid({n})",
                               globals_[0] if scalar else "(" + ", ".join(globals_) + ")",
                               "int64" if scalar else ("int64",) * n,
                               tuple(f"global_{a}" for a in AXES[:n])))
        found.append(Intrinsic(f"gridsize({n})", f"cuda.gridsize({n})",
                               sizes[0] if scalar else "(" + ", ".join(sizes) + ")",
                               "int64" if scalar else ("int64",) * n,
                               tuple(f"gridsize_{a}" for a in AXES[:n])))
    found.append(Intrinsic("laneid", "cuda.laneid", "np.int32((tid_x + ntid_x * (tid_y + ntid_y * tid_z)) % 32)",
                           "int32", ("lane",)))
    found.append(Intrinsic("warpsize", "cuda.warpsize", "np.int32(32)", "int32", ("warpsize",)))
    for axis in AXES:
        for order in ("block first", "thread first", "dim first"):
            found.append(_global(axis, order))
    return {intrinsic.name: intrinsic for intrinsic in found}


INTRINSICS = _intrinsics()
# Every scalar launch index: (intrinsic, its component or None, quantity).
SCALAR_ATOMS = [(name, k if intrinsic.arity else None, quantity)
                for name, intrinsic in INTRINSICS.items() for k, quantity in enumerate(intrinsic.quantities)]
