//===- runtime/extension/stable_abi.cpp - Beyond the limited API ----------===//

#include "runtime/extension/stable_abi.h"

namespace kiln::extension {

void freeObject(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  auto free = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free(self);
  Py_DECREF(type);
}

PyObject *allocateObject(PyTypeObject *type) {
  auto allocate = reinterpret_cast<allocfunc>(PyType_GetSlot(type, Py_tp_alloc));
  return allocate(type, 0);
}

namespace {

/// The str attribute `name` of `type` as UTF-8, empty if it has none.
std::string textAttribute(PyTypeObject *type, const char *name) {
  std::string text;
  if (PyObject *value = PyObject_GetAttrString(reinterpret_cast<PyObject *>(type), name)) {
    if (PyUnicode_Check(value))
      if (const char *spelled = utf8(value))
        text = spelled;
    Py_DECREF(value);
  }
  return text;
}

} // namespace

std::string typeName(PyTypeObject *type) {
  // tp_name, which the limited API does not show: a class defined in Python
  // (a heap type) has its __name__ there, a type defined in C its dotted
  // name, whose last component is its __name__ and the rest its __module__.
  PyObject *errorType, *errorValue, *errorTraceback;
  PyErr_Fetch(&errorType, &errorValue, &errorTraceback);
  std::string name = textAttribute(type, "__name__");
  if (!(PyType_GetFlags(type) & Py_TPFLAGS_HEAPTYPE)) {
    std::string module = textAttribute(type, "__module__");
    if (!module.empty() && module != "builtins")
      name = module + "." + name;
  }
  PyErr_Restore(errorType, errorValue, errorTraceback);
  return name.empty() ? "?" : name;
}

} // namespace kiln::extension
