//===- runtime/extension/python_errors.cpp - Status to Python exceptions --===//
//
// How a failed Status becomes a Python exception:
//
//   CudaError        kiln.CudaError (a RuntimeError) with .code and .name
//   KernelException  the class the kernel raised (a builtin, or one its module
//                    defines), with the engine's message
//                    ("tid=[0, 0, 3] ctaid=[0, 0, 1]: ..."), as Numba
//   InvalidLaunch    ValueError
//   InvalidValue     ValueError
//   OutOfMemory      MemoryError
//   Interrupted      what the signal handler raised (KeyboardInterrupt)
//   everything else  RuntimeError
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/runtime_module.h"

namespace kiln::extension {
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

bool isExceptionClass(PyObject *candidate) {
  return candidate && PyType_Check(candidate) &&
         PyType_IsSubtype(reinterpret_cast<PyTypeObject *>(candidate),
                          reinterpret_cast<PyTypeObject *>(PyExc_Exception));
}

/// The exception class a kernel raised: a builtin ("ValueError"), or a
/// class its module defines, named with the module ("pkg.kernels.MyError")
/// and found in it. RuntimeError when there is no such class. Returns a new
/// reference.
PyObject *kernelExceptionClass(const std::string &name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos) {
    PyObject *builtins = PyEval_GetBuiltins(); // borrowed
    PyObject *found = builtins ? PyDict_GetItemString(builtins, name.c_str()) : nullptr;
    PyObject *type = isExceptionClass(found) ? found : PyExc_RuntimeError;
    Py_INCREF(type);
    return type;
  }
  PyObject *modules = PyImport_GetModuleDict(); // borrowed
  PyObject *module = PyDict_GetItemString(modules, name.substr(0, dot).c_str());
  PyObject *found = module ? PyObject_GetAttrString(module, name.c_str() + dot + 1) : nullptr;
  if (!found)
    PyErr_Clear();
  if (isExceptionClass(found))
    return found;
  Py_XDECREF(found);
  Py_INCREF(PyExc_RuntimeError);
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
    PyObject *type = kernelExceptionClass(status.exceptionClass());
    if (type == PyExc_RuntimeError && status.exceptionClass() != "RuntimeError")
      PyErr_Format(type, "%s: %s", status.exceptionClass().c_str(), message);
    else
      PyErr_SetString(type, message);
    Py_DECREF(type);
    return nullptr;
  }
  case ErrorKind::InvalidLaunch:
  case ErrorKind::InvalidValue:
    PyErr_SetString(PyExc_ValueError, message);
    return nullptr;
  case ErrorKind::OutOfMemory:
    PyErr_SetString(PyExc_MemoryError, message);
    return nullptr;
  case ErrorKind::Interrupted:
    // A signal handler raised while the launch ran: its exception stands.
    if (PyErr_Occurred())
      return nullptr;
    PyErr_SetString(PyExc_KeyboardInterrupt, message);
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

} // namespace kiln::extension
