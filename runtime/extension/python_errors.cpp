//===- runtime/extension/python_errors.cpp - Status to Python exceptions --===//
//
// How a failed Status becomes a Python exception:
//
//   CudaError        kiln.CudaError (a RuntimeError) with .code and .name
//   KernelException  the builtin class the kernel raised, with the engine's
//                    message ("tid=[0, 0, 3] ctaid=[0, 0, 1]: ..."), as Numba
//   InvalidLaunch    ValueError
//   InvalidValue     ValueError
//   OutOfMemory      MemoryError
//   everything else  RuntimeError
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/runtime_module.h"

namespace kiln::python {
namespace {

PyObject *cudaErrorType = nullptr;

PyObject *raiseCudaError(const Status &status) {
  PyObject *error = PyObject_CallFunction(cudaErrorType, "s", status.message().c_str());
  if (!error)
    return nullptr;
  PyObject *code = PyLong_FromLong(status.cudaErrorCode());
  PyObject *name = PyUnicode_FromString(status.cudaErrorName().c_str());
  if (code && name && PyObject_SetAttrString(error, "code", code) == 0 &&
      PyObject_SetAttrString(error, "name", name) == 0)
    PyErr_SetObject(cudaErrorType, error);
  Py_XDECREF(code);
  Py_XDECREF(name);
  Py_DECREF(error);
  return nullptr;
}

/// The builtin exception class a kernel raised, or RuntimeError when the
/// name is not one (kernels can only raise builtin exceptions).
PyObject *builtinExceptionClass(const std::string &name) {
  PyObject *builtins = PyEval_GetBuiltins(); // borrowed
  PyObject *found = builtins ? PyDict_GetItemString(builtins, name.c_str()) : nullptr;
  if (found && PyType_Check(found) &&
      PyType_IsSubtype(reinterpret_cast<PyTypeObject *>(found),
                       reinterpret_cast<PyTypeObject *>(PyExc_Exception)))
    return found;
  return PyExc_RuntimeError;
}

} // namespace

PyObject *raiseStatus(const Status &status) {
  const char *message = status.message().c_str();
  switch (status.kind()) {
  case ErrorKind::None:
    PyErr_SetString(PyExc_SystemError, "kiln: raiseStatus() of a success");
    return nullptr;
  case ErrorKind::CudaError:
    return raiseCudaError(status);
  case ErrorKind::KernelException: {
    PyObject *type = builtinExceptionClass(status.exceptionClass());
    if (type == PyExc_RuntimeError && status.exceptionClass() != "RuntimeError") {
      PyErr_Format(type, "%s: %s", status.exceptionClass().c_str(), message);
      return nullptr;
    }
    PyErr_SetString(type, message);
    return nullptr;
  }
  case ErrorKind::InvalidLaunch:
  case ErrorKind::InvalidValue:
    PyErr_SetString(PyExc_ValueError, message);
    return nullptr;
  case ErrorKind::OutOfMemory:
    PyErr_SetString(PyExc_MemoryError, message);
    return nullptr;
  case ErrorKind::NoBinaryForGpu:
  case ErrorKind::Deadlock:
  case ErrorKind::Unavailable:
  case ErrorKind::Internal:
    break;
  }
  PyErr_SetString(PyExc_RuntimeError, message);
  return nullptr;
}

bool addErrorTypes(PyObject *module) {
  PyObject *attributes = Py_BuildValue("{s:s,s:i,s:O}", "__doc__",
                                       "A CUDA driver call failed: .code is the CUresult, "
                                       ".name the driver's name for it (CUDA_ERROR_...).",
                                       "code", 0, "name", Py_None);
  if (!attributes)
    return false;
  cudaErrorType = PyErr_NewException("kiln._runtime.CudaError", PyExc_RuntimeError, attributes);
  Py_DECREF(attributes);
  if (!cudaErrorType)
    return false;
  return PyModule_AddObjectRef(module, "CudaError", cudaErrorType) == 0;
}

} // namespace kiln::python
