"""Drawing arrays (a mixin of Generator): read-only inputs of a kind and
their values, and outputs; for either, its dimensions, the fields of a
structured one and how it is cut from its base in its coverage layout."""

import itertools

import numpy as np

from .arrays import FIELD_NAMES, ArrayParam, View, element_kind
from .numba_typing import int_limits
from .vocabulary import COMPLEX_DTYPES, DTYPES, INT_DTYPES, INTRINSICS, LAYOUTS

MAX_INPUTS = 3
INPUT_ELEMENTS = 512


class ArrayGeneration:
    """Generator's drawing of arrays; it uses the Generator's `random`,
    `plain`, `arrays`, fresh() and some_type()."""

    # Inputs.

    def input_of_kind(self, kind):
        matching = [a for a in self.arrays if not a.output and
                    any(element_kind(t) == kind for t in ([a.dtype] if a.fields is None else dict(a.fields).values()))]
        if matching and (len([a for a in self.arrays if not a.output]) >= MAX_INPUTS or self.random.random() < 0.6):
            return self.random.choice(matching)
        return self.new_input(kind)

    def new_input(self, kind):
        r = self.random
        dtype = self.some_type(kind)
        layout = r.choice(["C", "F", "A", "0-d"] if self.plain else LAYOUTS)
        ndim = self.ndim_for(layout)
        shape = self.input_shape(ndim, layout)
        fields = self.record_fields(dtype) if layout == "record" else None
        view, signature_layout = self.view_for(layout, shape)
        array = ArrayParam(self.fresh("x"), None if fields else dtype, layout, shape, view, signature_layout,
                           output=False, fields=fields)
        size = int(np.prod(view.base_shape))
        array.values = {field: self.input_values(t, size)
                        for field, t in (fields if fields else [(None, dtype)])}
        self.arrays.append(array)
        return array

    def input_shape(self, ndim, layout):
        r = self.random
        for _ in range(20):
            shape = tuple(r.randint(2, 40) if ndim == 1 else r.randint(2, 12) for _ in range(ndim))
            if np.prod(shape) <= INPUT_ELEMENTS and (layout != "F" or sum(d > 1 for d in shape) >= 2):
                return shape
        return (2,) * ndim

    def input_values(self, dtype, size):
        """Deterministic values of every magnitude the type holds (floats
        and complex parts in eighths, exact in every float type)."""
        r = self.random
        if dtype == "bool":
            return [r.random() < 0.5 for _ in range(size)]
        if dtype in INT_DTYPES:
            lo, hi = int_limits(dtype)
            lo, hi = max(lo, -(1 << 30)), min(hi, 1 << 31)
            return [r.randint(max(lo, -20), min(hi, 20)) if r.random() < 0.7 else r.randint(lo, hi)
                    for _ in range(size)]
        eighths = [r.randint(-512, 512) / 8 for _ in range(size * (2 if dtype in COMPLEX_DTYPES else 1))]
        if dtype in COMPLEX_DTYPES:
            return [complex(a, b) for a, b in zip(eighths[::2], eighths[1::2])]
        return eighths

    def record_fields(self, dtype):
        r = self.random
        fields = [dtype] + [r.choice(DTYPES) for _ in range(r.randint(0, 2))]
        r.shuffle(fields)
        return list(zip(FIELD_NAMES, fields))

    # Outputs, and what any array is cut from.

    def ndim_for(self, layout, intrinsic=None):
        r = self.random
        if layout == "0-d":
            return 0
        if layout == "F":
            return r.choice([2, 3])
        if intrinsic is not None and INTRINSICS[intrinsic].arity and r.random() < 0.5:
            return INTRINSICS[intrinsic].arity
        if layout == "record":
            return r.choice([1, 1, 2])
        return r.choice([1, 1, 2, 3])

    def view_for(self, layout, shape):
        """How an argument of `shape` and coverage layout `layout` is cut
        from its base; and its layout in the signature."""
        r = self.random
        ndim = len(shape)
        if layout == "0-d":
            if r.random() < 0.5:
                return View(()), r.choice(["C", "A"])
            length = r.randint(2, 5)
            return View((length,), slices=(r.randrange(length), Ellipsis)), r.choice(["C", "A"])
        if layout in ("C", "F") or layout == "record" and r.random() < 0.6:
            order = "F" if layout == "F" else "C"
            if r.random() < 0.5:
                return View(tuple(shape), order), order
            # A contiguous block of a larger base, cut along the slowest axis.
            axis = ndim - 1 if order == "F" else 0
            extra, start = r.randint(1, 4), r.randint(0, 2)
            base = list(shape)
            base[axis] += extra + start
            slices = [slice(None)] * ndim
            slices[axis] = slice(start, start + shape[axis])
            return View(tuple(base), order, tuple(slices)), order
        if layout == "A":
            # The whole base, reversed along an axis or (2-D, 3-D) transposed
            # (in a plain program, contiguous: transposed, or as it is).
            if self.plain and ndim == 1:
                return View(tuple(shape)), "A"
            if ndim >= 2 and (self.plain or r.random() < 0.6):
                axes = tuple(reversed(range(ndim))) if self.plain else \
                    tuple(r.choice([p for p in itertools.permutations(range(ndim)) if p != tuple(range(ndim))]))
                base = [0] * ndim
                for position, axis in enumerate(axes):
                    base[axis] = shape[position]
                return View(tuple(base), r.choice(["C", "F"]), axes=axes), "A"
            slices = [slice(None)] * ndim
            slices[r.randrange(ndim)] = slice(None, None, -1)
            return View(tuple(shape), "C", tuple(slices)), "A"
        # A sub-sampled view: steps of 2 or 3 (some negative) along some axes.
        steps = [r.choice([1, 2, 3, -1, -2]) for _ in range(ndim)]
        if all(abs(s) == 1 for s in steps):
            steps[r.randrange(ndim)] = r.choice([2, 3, -2])
        base, slices = [], []
        for size, step in zip(shape, steps):
            offset, extra = r.randint(0, 2), r.randint(0, 2)
            span = abs(step) * (size - 1) + 1
            length = offset + span + extra
            base.append(length)
            if step > 0:
                slices.append(slice(offset, offset + span, step))
            else:
                first = length - 1 - offset
                stop = first - span
                slices.append(slice(first, stop if stop >= 0 else None, step))
        return View(tuple(base), "C", tuple(slices)), "A"

    def new_output(self, dtype, layout, shape):
        fields = self.record_fields(dtype) if layout == "record" else None
        view, signature_layout = self.view_for(layout, shape)
        array = ArrayParam(self.fresh("o"), None if fields else dtype, layout, tuple(shape), view, signature_layout,
                           output=True, fields=fields)
        self.arrays.append(array)
        return array
