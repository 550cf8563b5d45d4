"""Byte strides of contiguous arrays, as NumPy lays them out: a leaf both
kiln.cuda's device arrays and kiln._interop's foreign views use."""


def contiguous_strides(shape, itemsize, order="C"):
    """The strides of a C-ordered (`order` "C") or Fortran-ordered ("F")
    array of `shape`; extents of 0 count as 1, as NumPy's do."""
    strides = [0] * len(shape)
    stride = itemsize
    dims = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for dim in dims:
        strides[dim] = stride
        stride *= max(shape[dim], 1)
    return tuple(strides)
