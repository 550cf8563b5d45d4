//===- runtime/extension/module_image.h - A built module's image -*- C++ -*-===//
#pragma once

#include "module/format.h"
#include "runtime/extension/runtime_module.h"

namespace kiln::python {

/// ModuleImage: what kiln._loader sees of a built module's KilnModuleImage,
/// after the loader checked its header and manifest.
struct ModuleImageObject {
  PyObject_HEAD const KilnModuleImage *image;
  const uint8_t *payload;
  uint64_t payloadSize;
  PyObject *name;     ///< str
  PyObject *manifest; ///< bytes
};

extern PyTypeObject *moduleImageType;

inline bool isModuleImage(PyObject *object) {
  return PyObject_TypeCheck(object, moduleImageType);
}

} // namespace kiln::python
