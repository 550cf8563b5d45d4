# Tests: record types in signatures that are not numba.types.Record's form,
# or whose fields do not fit in the record.
from numba import cuda


@cuda.jit("void(Record([('a', {'type': float64})], 8, False)[::1])")  # expect-error: a record type is Record([(name, {'type': T, 'offset': N}), ...], size, aligned), with fields of scalars, records or NestedArray(scalar, shape) inside its size
def missing_offset(r):
    pass


@cuda.jit("void(Record([('a', {'type': float64, 'offset': 4})], 8, False)[::1])")  # expect-error: a record type is Record([(name, {'type': T, 'offset': N}), ...], size, aligned), with fields of scalars, records or NestedArray(scalar, shape) inside its size
def past_the_end(r):
    pass


@cuda.jit("void(Record([('a', {'type': NestedArray(int16, (3, 2)), 'offset': 0})], 10, True))")  # expect-error: a record type is Record([(name, {'type': T, 'offset': N}), ...], size, aligned), with fields of scalars, records or NestedArray(scalar, shape) inside its size
def nested_too_large(r):
    pass
