//===- backend/extension_module.h - The object that makes a module -*- C++ -*-===//
//
// A built kernel module is a Python extension module: the host objects of
// its specializations, linked with one more object that holds what the
// runtime reads (runtime/module_format.h):
//
//   bundle       the bundle bytes, a 16-byte aligned constant
//   hostEntries  KilnHostEntries[], one row per specialization in manifest
//                order: <entry>_thread, and <entry>_block or null
//   image        KilnModuleImage pointing at both
//   PyInit_<last name component>
//                m = PyImport_ImportModule("kiln._runtime");
//                c = PyObject_GetAttrString(m, "module_loader");
//                f = PyCapsule_GetPointer(c, "kiln._runtime.module_loader");
//                return f(&image);  (null on any null, references dropped)
//
// Everything but PyInit_ is internal, and the entries are referenced as
// hidden symbols, so that the linked module exports PyInit_ alone and two
// Kiln modules in one process never see each other's symbols. The Python
// functions stay undefined, resolved from the interpreter that imports it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::backend {

struct ExtensionEntry {
  /// The stem of the host entries: `<entryName>_thread`, `<entryName>_block`.
  std::string entryName;
  bool hasBlockEntry = false;
};

/// An ELF object for the host (position-independent) holding the bundle,
/// the host entry table, the module image and PyInit_ of `moduleName`
/// (dotted: "pkg.kernels" defines PyInit_kernels).
llvm::Expected<std::string> createExtensionObject(llvm::StringRef moduleName,
                                                  llvm::StringRef bundle,
                                                  llvm::ArrayRef<ExtensionEntry> entries);

/// The last component of a dotted module name: "kernels" for "pkg.kernels".
llvm::StringRef extensionBaseName(llvm::StringRef moduleName);

} // namespace kiln::backend
