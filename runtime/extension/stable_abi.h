//===- runtime/extension/stable_abi.h - Beyond the limited API ---*- C++ -*-===//
//
// kiln._runtime is compiled against CPython's limited API of the oldest
// version it supports (cmake/KilnPythonExtension.cmake), so that one build
// imports in every later CPython. What the full API spells as macros that
// read object layouts (a type's tp_name and tp_free, Py_XSETREF, the
// vectorcall helpers) is written here once, in the functions the stable ABI
// has; compiled against the full API (a free-threaded CPython) the same
// code holds.
//
//===----------------------------------------------------------------------===//
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string>

namespace kiln::extension {

/// Py_TPFLAGS_HAVE_VECTORCALL: the limited API names it from 3.12 on, but
/// the bit and the `__vectorcalloffset__` member it goes with mean the same
/// in every CPython since 3.8, so a type built from a spec gets vectorcall
/// on 3.11 too.
#ifdef Py_TPFLAGS_HAVE_VECTORCALL
inline constexpr unsigned long vectorcallTypeFlag = Py_TPFLAGS_HAVE_VECTORCALL;
#else
inline constexpr unsigned long vectorcallTypeFlag = 1UL << 11;
#endif

/// PY_VECTORCALL_ARGUMENTS_OFFSET, which a caller may set in nargsf.
inline constexpr size_t vectorcallArgumentsOffset = size_t(1) << (8 * sizeof(size_t) - 1);

/// The positional argument count of a vectorcall (PyVectorcall_NARGS).
inline size_t vectorcallArgumentCount(size_t nargsf) {
  return nargsf & ~vectorcallArgumentsOffset;
}

/// The signature of a vectorcall function (vectorcallfunc).
using VectorcallFunction = PyObject *(*)(PyObject *callable, PyObject *const *args, size_t nargsf,
                                         PyObject *kwnames);

/// Stores `value` (a new reference, or null) in `slot` and then releases
/// what the slot held (Py_XSETREF).
inline void replaceReference(PyObject *&slot, PyObject *value) {
  PyObject *old = slot;
  slot = value;
  Py_XDECREF(old);
}

/// Frees an object of one of the runtime's heap types and drops the
/// reference its type holds for it: the end of every tp_dealloc.
void freeObject(PyObject *self);

/// A new object of `type` (tp_alloc), or null with an exception set.
PyObject *allocateObject(PyTypeObject *type);

/// What CPython's own messages call `type`: "numpy.ndarray" for a type
/// that names its module, "int" for a built-in, a class's __name__.
std::string typeName(PyTypeObject *type);

/// typeName of `object`'s type.
inline std::string typeNameOf(PyObject *object) {
  return typeName(Py_TYPE(object));
}

/// The UTF-8 text of a str (owned by the str), or null with an exception
/// set.
inline const char *utf8(PyObject *text) {
  return PyUnicode_AsUTF8AndSize(text, nullptr);
}

/// The size and items of what PySequence_Fast returned (a list or tuple),
/// borrowed.
inline Py_ssize_t fastSize(PyObject *fast) {
  return PyList_Check(fast) ? PyList_Size(fast) : PyTuple_Size(fast);
}
inline PyObject *fastItem(PyObject *fast, Py_ssize_t index) {
  return PyList_Check(fast) ? PyList_GetItem(fast, index) : PyTuple_GetItem(fast, index);
}

} // namespace kiln::extension
