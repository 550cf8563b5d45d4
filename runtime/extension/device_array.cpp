//===- runtime/extension/device_array.cpp - DeviceArrayBase ---------------===//

#include "runtime/extension/device_array.h"

namespace kiln::extension {

PyTypeObject *deviceArrayType = nullptr;

void contiguity(unsigned ndim, const int64_t *shape, const int64_t *strides, int64_t itemSize,
                bool &contiguousC, bool &contiguousF) {
  for (unsigned i = 0; i < ndim; ++i)
    if (shape[i] == 0) {
      contiguousC = contiguousF = true;
      return;
    }
  int64_t expected = itemSize;
  contiguousC = true;
  for (unsigned i = ndim; i-- > 0;) {
    if (shape[i] == 1)
      continue;
    if (strides[i] != expected) {
      contiguousC = false;
      break;
    }
    expected *= shape[i];
  }
  expected = itemSize;
  contiguousF = true;
  for (unsigned i = 0; i < ndim; ++i) {
    if (shape[i] == 1)
      continue;
    if (strides[i] != expected) {
      contiguousF = false;
      break;
    }
    expected *= shape[i];
  }
}

namespace {

DeviceArrayObject *asArray(PyObject *self) {
  return reinterpret_cast<DeviceArrayObject *>(self);
}

/// A tuple of at most maxArrayDimensions ints from a sequence.
PyObject *dimensionTuple(PyObject *sequence, const char *what, int64_t *values, unsigned &count) {
  PyObject *tuple = PySequence_Tuple(sequence);
  if (!tuple) {
    PyErr_Format(PyExc_TypeError, "kiln: DeviceArrayBase %s must be a sequence of ints", what);
    return nullptr;
  }
  Py_ssize_t length = PyTuple_Size(tuple);
  if (length > Py_ssize_t(maxArrayDimensions)) {
    PyErr_Format(PyExc_ValueError, "kiln: DeviceArrayBase %s has %zd dimensions, more than %u",
                 what, length, maxArrayDimensions);
    Py_DECREF(tuple);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < length; ++i) {
    PyObject *item = PyTuple_GetItem(tuple, i);
    long long value = PyLong_AsLongLong(item);
    if (value == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "kiln: DeviceArrayBase %s must hold ints, not %R", what, item);
      Py_DECREF(tuple);
      return nullptr;
    }
    values[i] = value;
  }
  count = unsigned(length);
  return tuple;
}

/// The element of a datetime64 or timedelta64 dtype, which has no PEP 3118
/// format: by the dtype's code (`dtype.str`).
bool dateTimeElementOfDtype(PyObject *dtype, ElementId &element) {
  PyObject *code = PyObject_GetAttrString(dtype, "str");
  const char *text = code ? utf8(code) : nullptr;
  bool known = text && dateTimeElementFromCode(text, element);
  Py_XDECREF(code);
  PyErr_Clear();
  return known;
}

int initialize(PyObject *self, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"shape",   "strides", "dtype",         "format",
                                   "pointer", "owner",   "stream_handle", nullptr};
  PyObject *shape, *strides, *dtype, *format, *pointerObject, *owner;
  PyObject *streamObject = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOUOO|O:DeviceArrayBase",
                                   const_cast<char **>(keywords), &shape, &strides, &dtype, &format,
                                   &pointerObject, &owner, &streamObject))
    return -1;
  DeviceArrayObject *array = asArray(self);
  DevicePointer pointer;
  StreamHandle stream;
  if (!pointerFromObject(pointerObject, "pointer", pointer) ||
      !streamFromObject(streamObject, stream))
    return -1;
  int64_t shapeValues[maxArrayDimensions], strideValues[maxArrayDimensions];
  unsigned ndim = 0, strideCount = 0;
  PyObject *shapeTuple = dimensionTuple(shape, "shape", shapeValues, ndim);
  if (!shapeTuple)
    return -1;
  PyObject *stridesTuple = dimensionTuple(strides, "strides", strideValues, strideCount);
  if (!stridesTuple) {
    Py_DECREF(shapeTuple);
    return -1;
  }
  int64_t size = 1;
  bool valid = strideCount == ndim;
  for (unsigned i = 0; valid && i < ndim; ++i) {
    valid = shapeValues[i] >= 0;
    size *= shapeValues[i];
  }
  PyObject *itemSizeObject = valid ? PyObject_GetAttrString(dtype, "itemsize") : nullptr;
  long long itemSize = itemSizeObject ? PyLong_AsLongLong(itemSizeObject) : -1;
  Py_XDECREF(itemSizeObject);
  if (!valid || itemSize <= 0) {
    PyErr_Clear();
    if (!valid)
      PyErr_Format(PyExc_ValueError,
                   "kiln: DeviceArrayBase shape %R and strides %R do not describe an array",
                   shapeTuple, stridesTuple);
    else
      PyErr_Format(PyExc_TypeError, "kiln: DeviceArrayBase dtype %R has no positive itemsize",
                   dtype);
    Py_DECREF(shapeTuple);
    Py_DECREF(stridesTuple);
    return -1;
  }
  const char *formatText = utf8(format);
  if (!formatText) {
    Py_DECREF(shapeTuple);
    Py_DECREF(stridesTuple);
    return -1;
  }

  // Replace whatever an earlier __init__ set.
  replaceReference(array->shapeTuple, shapeTuple);
  replaceReference(array->stridesTuple, stridesTuple);
  Py_INCREF(dtype);
  replaceReference(array->dtype, dtype);
  Py_INCREF(format);
  replaceReference(array->format, format);
  Py_INCREF(owner);
  replaceReference(array->owner, owner);
  array->pointer = pointer;
  array->stream = stream;
  array->itemSize = itemSize;
  array->size = size;
  array->ndim = ndim;
  for (unsigned i = 0; i < ndim; ++i) {
    array->shape[i] = shapeValues[i];
    array->strides[i] = strideValues[i];
  }
  array->elementKnown = elementFromFormat(formatText, size_t(itemSize), array->element) ||
                        dateTimeElementOfDtype(dtype, array->element);
  contiguity(ndim, shapeValues, strideValues, itemSize, array->contiguousC, array->contiguousF);
  array->initialized = true;
  return 0;
}

int traverse(PyObject *self, visitproc visit, void *arg) {
  DeviceArrayObject *array = asArray(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(array->dtype);
  Py_VISIT(array->owner);
  return 0;
}

int clear(PyObject *self) {
  DeviceArrayObject *array = asArray(self);
  Py_CLEAR(array->shapeTuple);
  Py_CLEAR(array->stridesTuple);
  Py_CLEAR(array->dtype);
  Py_CLEAR(array->format);
  Py_CLEAR(array->owner);
  return 0;
}

void deallocate(PyObject *self) {
  PyObject_GC_UnTrack(self);
  clear(self);
  freeObject(self);
}

PyObject *orNone(PyObject *value) {
  PyObject *result = value ? value : Py_None;
  Py_INCREF(result);
  return result;
}

PyObject *getShape(PyObject *self, void *) {
  return asArray(self)->shapeTuple ? orNone(asArray(self)->shapeTuple) : PyTuple_New(0);
}
PyObject *getStrides(PyObject *self, void *) {
  return asArray(self)->stridesTuple ? orNone(asArray(self)->stridesTuple) : PyTuple_New(0);
}
PyObject *getDtype(PyObject *self, void *) {
  return orNone(asArray(self)->dtype);
}
PyObject *getFormat(PyObject *self, void *) {
  return orNone(asArray(self)->format);
}
PyObject *getOwner(PyObject *self, void *) {
  return orNone(asArray(self)->owner);
}
PyObject *getNdim(PyObject *self, void *) {
  return PyLong_FromUnsignedLong(asArray(self)->ndim);
}
PyObject *getSize(PyObject *self, void *) {
  return PyLong_FromLongLong(asArray(self)->initialized ? asArray(self)->size : 0);
}
PyObject *getItemSize(PyObject *self, void *) {
  return PyLong_FromLongLong(asArray(self)->itemSize);
}
PyObject *getNbytes(PyObject *self, void *) {
  DeviceArrayObject *array = asArray(self);
  return PyLong_FromLongLong(array->initialized ? array->size * array->itemSize : 0);
}
PyObject *getPointer(PyObject *self, void *) {
  return PyLong_FromUnsignedLongLong(asArray(self)->pointer);
}
PyObject *getStream(PyObject *self, void *) {
  return PyLong_FromSize_t(asArray(self)->stream);
}
PyObject *getContiguousC(PyObject *self, void *) {
  return PyBool_FromLong(asArray(self)->contiguousC);
}
PyObject *getContiguousF(PyObject *self, void *) {
  return PyBool_FromLong(asArray(self)->contiguousF);
}

PyGetSetDef accessors[] = {
    {"shape", getShape, nullptr, "The shape (tuple of ints).", nullptr},
    {"strides", getStrides, nullptr, "The strides in bytes (tuple of ints).", nullptr},
    {"dtype", getDtype, nullptr, "The dtype, as given.", nullptr},
    {"format", getFormat, nullptr, "The PEP 3118 format of the dtype.", nullptr},
    {"ndim", getNdim, nullptr, "The number of dimensions.", nullptr},
    {"size", getSize, nullptr, "The number of elements.", nullptr},
    {"itemsize", getItemSize, nullptr, "Bytes per element.", nullptr},
    {"nbytes", getNbytes, nullptr, "size * itemsize.", nullptr},
    {"device_pointer", getPointer, nullptr, "The address of element 0 (int).", nullptr},
    {"owner", getOwner, nullptr, "What keeps the memory alive.", nullptr},
    {"stream_handle", getStream, nullptr, "The stream the array is used on (int).", nullptr},
    {"is_c_contiguous", getContiguousC, nullptr, "Whether the array is C-contiguous.", nullptr},
    {"is_f_contiguous", getContiguousF, nullptr, "Whether the array is F-contiguous.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot slots[] = {
    {Py_tp_doc, const_cast<char *>("DeviceArrayBase(shape, strides, dtype, format, pointer, owner, "
                                   "stream_handle=0): an array in the target's memory.")},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void *>(initialize)},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocate)},
    {Py_tp_traverse, reinterpret_cast<void *>(traverse)},
    {Py_tp_clear, reinterpret_cast<void *>(clear)},
    {Py_tp_getset, accessors},
    {0, nullptr},
};

PyType_Spec spec = {"kiln._runtime.DeviceArrayBase", sizeof(DeviceArrayObject), 0,
                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, slots};

} // namespace

bool addDeviceArrayType(PyObject *module) {
  PyObject *type = PyType_FromSpec(&spec);
  deviceArrayType = reinterpret_cast<PyTypeObject *>(type);
  return type && PyModule_AddObjectRef(module, "DeviceArrayBase", type) == 0;
}

} // namespace kiln::extension
