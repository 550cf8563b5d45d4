//===- runtime/extension/extension_module.cpp - PyInit__runtime -----------===//

#include "runtime/extension/runtime_module.h"

namespace kiln::extension {

bool addType(PyObject *module, const char *name, PyObject *type) {
  if (!type)
    return false;
  int result = PyModule_AddObjectRef(module, name, type);
  Py_DECREF(type);
  return result == 0;
}

namespace {

PyModuleDef runtimeModule = {
    PyModuleDef_HEAD_INIT,
    "kiln._runtime",
    "Kiln's runtime: targets, memory, streams, device arrays and kernel dispatch.",
    -1,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

} // namespace
} // namespace kiln::extension

PyMODINIT_FUNC PyInit__runtime(void) {
  using namespace kiln::extension;
  PyObject *module = PyModule_Create(&runtimeModule);
  if (!module)
    return nullptr;
  bool added = addErrorTypes(module) && addTargetFunctions(module) && addDeviceBufferType(module) &&
               addHostBufferType(module) && addMemoryCopyFunctions(module) &&
               addIpcFunctions(module) && addStreamTypes(module) && addDeviceArrayType(module) &&
               addModuleLoader(module) && addDispatcherTypes(module);
  if (!added) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
