//===- runtime/extension/module_image.h - A built module's image -*- C++ -*-===//
#pragma once

#include "module/format.h"
#include "runtime/extension/runtime_module.h"

#include <cstddef>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln::extension {

/// ModuleImage: what kiln._loader sees of a built module's KilnModuleImage,
/// after the loader checked its header and manifest. The manifest and the
/// payload stay in the mapped bundle, read only when asked for.
struct ModuleImageObject {
  PyObject_HEAD const KilnModuleImage *image;
  const uint8_t *payload;
  uint64_t payloadSize;
  const char *manifest;
  uint64_t manifestSize;
  PyObject *name;            ///< str
  PyObject *specializations; ///< tuple of (name, kind), in manifest order
  /// Where each specialization's entry lies in the manifest, and the
  /// constants list ({0, 0}: none).
  std::vector<std::pair<size_t, size_t>> *entries;
  std::pair<size_t, size_t> constants;
  /// Fat binaries read so far (checked before their first load), for tests.
  uint64_t fatBinariesRead;
  /// The fat binaries found intact, as (start, size, checksum): the kernels
  /// of one image share its fat binary, which is read once.
  std::set<std::tuple<const uint8_t *, uint64_t, uint64_t>> *intactFatBinaries;
  /// The path of the source file beside the module when it differs from
  /// the one the module was built from, else None.
  PyObject *changedSource;
};

extern PyTypeObject *moduleImageType;

inline bool isModuleImage(PyObject *object) {
  return PyObject_TypeCheck(object, moduleImageType);
}

} // namespace kiln::extension
