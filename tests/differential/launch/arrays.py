"""Array parameters (ArrayParam): how each is cut from its base (View), its
element type and its type in the signature, how the kernel and the host
functions spell its elements, the fresh argument a run gets (an output
filled with SENTINEL_BYTE), the float64 shadows of float16 on the host;
and whether an array holds a value as it is."""

import dataclasses

import numpy as np

from .expressions import Range
from .numba_typing import int_limits, kind_of
from .vocabulary import COMPLEX_DTYPES, DTYPES, FLOAT_DTYPES, INT_DTYPES

SIGNATURE_DTYPES = {dtype: ("boolean" if dtype == "bool" else dtype) for dtype in DTYPES}
NUMPY_DTYPES = {dtype: np.dtype(np.bool_ if dtype == "bool" else dtype) for dtype in DTYPES}
SENTINEL_BYTE = 0x5A
FIELD_NAMES = ("f0", "f1", "f2")


@dataclasses.dataclass
class View:
    """How an argument is cut from its base: `base[slices]`, then
    transposed by `axes`; `order` is the base's memory order."""

    base_shape: tuple
    order: str = "C"
    slices: tuple = None
    axes: tuple = None

    def apply(self, base):
        view = base if self.slices is None else base[self.slices]
        return view if self.axes is None else view.transpose(self.axes)

    def contiguous(self):
        """Whether the argument is C- or F-contiguous (Numba's CUDA target,
        and its simulator, copy only those to the device)."""
        view = self.apply(np.empty(self.base_shape, np.uint8, order=self.order))
        return view.flags.c_contiguous or view.flags.f_contiguous


@dataclasses.dataclass(eq=False)
class ArrayParam:
    """An array parameter: an output (written) or a read-only input, of
    `dtype`, or a structured array of `fields` [(name, dtype)]. `shape` is
    what the kernel sees; `signature_layout` its layout in the signature
    ("C", "F", "A"); `layout` its coverage layout."""

    name: str
    dtype: object
    layout: str
    shape: tuple
    view: View
    signature_layout: str
    output: bool
    fields: list = None
    values: dict = None  # input data: per field (None for a plain array), the base's elements in C order

    @property
    def ndim(self):
        return len(self.shape)

    def numpy_dtype(self):
        if self.fields is None:
            return NUMPY_DTYPES[self.dtype]
        return np.dtype([(name, NUMPY_DTYPES[dtype]) for name, dtype in self.fields], align=True)

    def element_type(self, field=None):
        return dict(self.fields)[field] if field is not None else self.dtype

    def value_range(self, field=None):
        """The range of an input's elements."""
        dtype = self.element_type(field)
        values = self.values[field]
        if dtype in COMPLEX_DTYPES:
            parts = [v for c in values for v in (c.real, c.imag)]
            return Range(min(parts), max(parts), 3)
        bits = 3 if dtype in FLOAT_DTYPES else 0
        return Range(min(values), max(values), bits) if dtype != "bool" else Range(0, 1)

    def signature(self):
        if self.fields is not None:
            dtype = self.numpy_dtype()
            fields = ", ".join(f"('{name}', {{'type': {SIGNATURE_DTYPES[t]}, 'offset': {dtype.fields[name][1]}}})"
                               for name, t in self.fields)
            element = f"Record([{fields}], {dtype.itemsize}, True)"
        else:
            element = SIGNATURE_DTYPES[self.dtype]
        if self.ndim == 0:
            return f"Array({element}, 0, '{self.signature_layout}')"
        dims = [":"] * self.ndim
        if self.signature_layout == "C":
            dims[-1] = "::1"
        elif self.signature_layout == "F":
            dims[0] = "::1"
        return f"{element}[{', '.join(dims)}]"

    def host_names(self):
        """The host kernel's parameters for this array: one per field of a
        structured array."""
        if self.fields is None:
            return [self.name]
        return [f"{self.name}_{name}" for name, _ in self.fields]

    def render_argument(self, r, field):
        return f"{self.name}_{field}" if r.host and field is not None else self.name

    def render_element(self, r, index, field, item_syntax, name=None):
        """An element as the kernel (or, with `name`, a store helper, whose
        parameter holds the array, or on the host that field's view)
        spells it."""
        if len(index) == 0:
            subscript = "()"
        elif len(index) == 1:
            subscript = index[0].render(r)
        else:
            subscript = ", ".join(c.render(r) for c in index)
        if field is None:
            return f"{name or self.name}[{subscript}]"
        if r.host:
            return f"{name or self.render_argument(r, field)}[{subscript}]"
        name = name or self.name
        return f"{name}[{subscript}]['{field}']" if item_syntax else f"{name}[{subscript}].{field}"

    def build(self):
        """A fresh (argument, base): the base filled with the sentinel (an
        output) or with the input's values, and the view of it the kernel
        gets."""
        dtype = self.numpy_dtype()
        size = int(np.prod(self.view.base_shape))
        flat = np.full(size * dtype.itemsize, SENTINEL_BYTE, np.uint8).view(dtype)
        base = flat.reshape(self.view.base_shape, order=self.view.order)
        if not self.output:
            for field, values in self.values.items():
                target = base if field is None else base[field]
                target[...] = np.array(values, NUMPY_DTYPES[self.element_type(field)]).reshape(self.view.base_shape)
        return self.view.apply(base), base

    def host_arguments(self, argument):
        """The host kernel's arguments for this array, and what to do once
        it has run: float16 travels as a float64 shadow, converted back
        (exactly: every value stored in it was rounded once)."""
        parts = [argument] if self.fields is None else [argument[name] for name, _ in self.fields]
        host, write_backs = [], []
        for part in parts:
            if part.dtype == np.float16:
                shadow = part.astype(np.float64)
                host.append(shadow)
                if self.output:
                    write_backs.append((part, shadow))
            else:
                host.append(part)
        return host, write_backs


def run_write_backs(write_backs):
    for part, shadow in write_backs:
        part[...] = shadow.astype(np.float16)


def stored_exactly(value, dtype):
    """Whether an integer array holds `value` as it is (no truncation)."""
    if dtype not in INT_DTYPES or kind_of(value.type) not in ("int", "bool"):
        return True
    lo, hi = int_limits(dtype)
    return lo <= value.range.lo and value.range.hi <= hi


def element_kind(dtype):
    return "int" if dtype in INT_DTYPES else kind_of(dtype)
