"""NumPy structured arrays and structured scalars passed to kernels that
specialize on demand (kiln.cuda.jit without signatures), as Numba's typeof
gives them: a structured dtype is a Record of its fields, aligned or packed;
fields hold scalars or C arrays of them (nested arrays). A record is passed
by reference: a kernel's stores reach the caller's array or scalar."""

import numpy as np
import pytest

KERNELS = '''
import numpy as np
from kiln import cuda


@cuda.jit
def scale_field(points, factor):
    i = cuda.grid(1)
    if i < points.size:
        points[i].x = points[i].x * factor
        points[i]["n"] += 1


@cuda.jit
def copy_record(points, to, frm):
    points[to] = points[frm]


@cuda.jit
def set_fields(r, v):
    r.x = v
    r[1] = 7


@cuda.jit
def read_fields(r, out):
    out[0] = r.x
    out[1] = r.n
    out[2] = r.z.imag


@cuda.jit
def fill_nested(r):
    r.g = 2
    for i in range(r.h.shape[0]):
        r.h[i] = 1.5 * (i + 1)


@cuda.jit
def read_nested_2d(r, out):
    for i in range(r.j.shape[0]):
        for j in range(r.j.shape[1]):
            out[i, j] = r.j[i, j]


@cuda.jit
def assign_nested(records, i, src):
    records[i]["values"] = src


@cuda.jit
def copy_nested(src, dst):
    dst.j = src["j"]
'''

POINT = np.dtype([("x", np.float64), ("n", np.int32), ("z", np.complex64), ("flag", np.bool_)],
                 align=True)
PACKED = np.dtype([("n", np.int16), ("x", np.float64)])
WITH_ARRAY = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)
WITH_2D = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
NESTED = np.dtype([("values", np.int16, (3,))], align=True)


@pytest.fixture
def kernels(source_module):
    return source_module("record_kernels", KERNELS)


def test_fields_of_a_record_array_update_in_place(kernels):
    points = np.zeros(5, POINT)
    points["x"] = np.arange(5.0)
    points["n"] = 10
    kernels.scale_field[1, 8](points, 2.5)
    np.testing.assert_array_equal(points["x"], np.arange(5.0) * 2.5)
    np.testing.assert_array_equal(points["n"], 11)
    # A packed dtype (no alignment) is another type, specialized again.
    packed = np.zeros(3, PACKED)
    packed["x"] = [1.0, 2.0, 3.0]
    kernels.scale_field[1, 4](packed, -1.0)
    np.testing.assert_array_equal(packed["x"], [-1.0, -2.0, -3.0])
    assert len(kernels.scale_field.signatures) == 2, kernels.scale_field.signatures


def test_a_record_assigned_whole_is_copied(kernels):
    points = np.zeros(3, POINT)
    points[2] = (4.5, 3, 1 + 2j, True)
    kernels.copy_record[1, 1](points, 0, 2)
    assert points[0] == points[2]
    assert points[1] == np.zeros(1, POINT)[0]


def test_a_structured_scalar_passes_by_reference(kernels):
    points = np.zeros(2, POINT)
    record = points[1]
    kernels.set_fields[1, 1](record, 3.25)
    assert record["x"] == 3.25 and record["n"] == 7
    assert points[1]["x"] == 3.25, "the scalar is a view of the array: the store reaches it"
    points[0] = (1.5, 4, 2 - 3j, False)
    out = np.zeros(3)
    kernels.read_fields[1, 1](points[0], out)
    np.testing.assert_array_equal(out, [1.5, 4, -3])


def test_nested_array_fields_read_and_write(kernels):
    record = np.zeros(1, WITH_ARRAY)[0]
    kernels.fill_nested[1, 1](record)
    assert record["g"] == 2
    np.testing.assert_array_equal(record["h"], [1.5, 3.0])

    with_2d = np.zeros(1, WITH_2D)
    with_2d[0]["j"] = np.arange(6.0).reshape(3, 2)
    out = np.zeros((3, 2), np.float32)
    kernels.read_nested_2d[1, 1](with_2d[0], out)
    np.testing.assert_array_equal(out, np.arange(6.0).reshape(3, 2))


def test_assigning_an_array_to_a_nested_field_copies_it(kernels):
    records = np.zeros(2, NESTED)
    kernels.assign_nested[1, 1](records, 1, np.array([3, 4, 5], np.int16))
    np.testing.assert_array_equal(records["values"], [[0, 0, 0], [3, 4, 5]])

    source = np.zeros(1, WITH_2D)
    source[0]["j"] = np.arange(6.0).reshape(3, 2) + 1
    target = np.zeros(1, WITH_2D)
    kernels.copy_nested[1, 1](source[0], target[0])
    np.testing.assert_array_equal(target[0]["j"], source[0]["j"])


def test_a_dtype_of_other_fields_is_named(kernels):
    nested = np.zeros(2, [("inner", [("a", np.int32)]), ("x", np.float64)])
    with pytest.raises(TypeError, match=r"argument 1 has dtype .*inner.*which Kiln cannot specialize"):
        kernels.scale_field[1, 2](nested, 2.0)
