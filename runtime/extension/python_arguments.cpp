//===- runtime/extension/python_arguments.cpp - Values from Python --------===//

#include "runtime/extension/runtime_module.h"

namespace kiln::extension {

bool pointerFromObject(PyObject *object, const char *what, DevicePointer &pointer) {
  if (!PyLong_Check(object)) {
    PyErr_Format(PyExc_TypeError, "kiln: %s must be an int address, not %s", what,
                 typeNameOf(object).c_str());
    return false;
  }
  unsigned long long value = PyLong_AsUnsignedLongLong(object);
  if (value == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "kiln: %s must be an address in [0, 2**64), not %R", what,
                 object);
    return false;
  }
  pointer = value;
  return true;
}

bool sizeFromObject(PyObject *object, const char *what, size_t &size) {
  if (!PyLong_Check(object)) {
    PyErr_Format(PyExc_TypeError, "kiln: %s must be an int, not %s", what,
                 typeNameOf(object).c_str());
    return false;
  }
  Py_ssize_t value = PyLong_AsSsize_t(object);
  if (value < 0) {
    if (PyErr_Occurred())
      PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "kiln: %s must be a byte count in [0, 2**63), not %R", what,
                 object);
    return false;
  }
  size = static_cast<size_t>(value);
  return true;
}

bool streamFromObject(PyObject *object, StreamHandle &stream) {
  if (!object || object == Py_None) {
    stream = 0;
    return true;
  }
  if (PyLong_Check(object)) {
    DevicePointer handle;
    if (!pointerFromObject(object, "a stream handle", handle))
      return false;
    stream = static_cast<StreamHandle>(handle);
    return true;
  }
  // A stream object (kiln's, or Numba's, whose handle is a ctypes c_void_p
  // holding its value in `.value`).
  PyObject *handle = PyObject_GetAttrString(object, "handle");
  if (!handle) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "kiln: a stream must be 0, an int handle or a stream object, not %s",
                 typeNameOf(object).c_str());
    return false;
  }
  if (!PyLong_Check(handle) && handle != Py_None) {
    PyObject *value = PyObject_GetAttrString(handle, "value");
    Py_DECREF(handle);
    if (!value) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "kiln: the handle of stream %R is not an int", object);
      return false;
    }
    handle = value;
  }
  bool ok = handle == Py_None || PyLong_Check(handle);
  if (!ok)
    PyErr_Format(PyExc_TypeError, "kiln: the handle of stream %R is not an int", object);
  else
    ok = streamFromObject(handle, stream);
  Py_DECREF(handle);
  return ok;
}

} // namespace kiln::extension
