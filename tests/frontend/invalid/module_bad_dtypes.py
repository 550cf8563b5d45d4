# Tests: module-level NumPy dtypes Kiln cannot give kernels: a big-endian or
# unknown dtype string, a field named twice, a dtype given as a dict, a
# nested array of records.
import numpy as np
from numba import cuda

BIG_ENDIAN = np.dtype(">f8")  # expect-error: '>f8' is not a dtype kernels can use
UNKNOWN = np.dtype("float37")  # expect-error: 'float37' is not a dtype kernels can use
TWICE = np.dtype([("x", "f4"), ("x", "i4")])  # expect-error: field 'x' appears twice in a structured dtype
AS_DICT = np.dtype({"names": ["x"], "formats": ["f4"]})  # expect-error: this expression cannot be evaluated when the module is compiled
INNER = np.dtype([("x", "f4")])
NESTED_RECORDS = np.dtype([("inner", INNER, 2)])  # expect-error: a structured dtype is np.dtype([(name, type), (name, type, shape), ...])
ALIGN_NOT_BOOL = np.dtype([("x", "f4")], align=1)  # expect-error: a structured dtype is np.dtype([(name, type), (name, type, shape), ...])


@cuda.jit("void(float32[:])")
def k(out):
    out[0] = 1.0
