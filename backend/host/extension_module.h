//===- backend/host/extension_module.h - The objects that make a module -*- C++ -*-===//
//
// A built kernel module is a Python extension module: the host objects of
// its specializations, linked with two more objects that hold what the
// runtime reads (module/format.h). The extension object:
//
//   hostEntries  KilnHostEntries[], one row per specialization in manifest
//                order: <entry>_thread, and <entry>_block or null
//   image        KilnModuleImage pointing at hostEntries, with the bundle's
//                size and manifest checksum (its `bundle` pointer is null),
//                which the object names as the absolute symbols of
//                bundleSymbols() for the link to define
//   PyInit_<last name component>
//                m = PyImport_ImportModule("kiln._runtime");
//                c = PyObject_GetAttrString(m, "module_loader");
//                f = PyCapsule_GetPointer(c, "kiln._runtime.module_loader");
//                return f(&image);  (null on any null, references dropped)
//
// The bundle object holds the bundle alone, in the section
// KILN_BUNDLE_SECTION without SHF_ALLOC: the linker keeps it and places it
// after every loaded segment, so the dynamic loader never maps it (a file
// cut short there must fail at import with an ImportError, not crash the
// loader), and the runtime reads it from the file.
//
// The extension object thus depends only on the module's name and its
// entries, not on the bundle: a build that moves lines or edits a kernel
// body (which change the manifest) or is served by the cache reuses it
// rather than have LLVM make it again.
//
// Everything but PyInit_ is internal, and the entries are referenced as
// hidden symbols, so that the linked module exports PyInit_ alone and two
// Kiln modules in one process never see each other's symbols. The Python
// functions stay undefined, resolved from the interpreter that imports it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/host/host_library.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::backend {

struct ExtensionEntry {
  /// The stem of the host entries: `<entryName>_thread`, `<entryName>_block`.
  std::string entryName;
  bool hasBlockEntry = false;
};

/// An ELF object for the host (position-independent) holding the host
/// entry table, the module image and PyInit_ of `moduleName` (dotted:
/// "pkg.kernels" defines PyInit_kernels). The image describes the bundle
/// whose bundleSymbols() the link defines.
llvm::Expected<std::string> createExtensionObject(llvm::StringRef moduleName,
                                                  llvm::ArrayRef<ExtensionEntry> entries);

/// What the extension object's image needs of `bundle` (a bundle as
/// module/bundle_writer.h makes it): its size and its manifest's checksum,
/// as symbols for the link to define.
llvm::Expected<std::vector<AbsoluteSymbol>> bundleSymbols(llvm::StringRef moduleName,
                                                          llvm::StringRef bundle);

/// A relocatable ELF object with `bundle` as its one section,
/// KILN_BUNDLE_SECTION (SHT_PROGBITS, not allocated, 16-byte aligned), for
/// the machine (class, byte order, OS ABI, e_machine, e_flags) of
/// `extensionObject`, the object of createExtensionObject().
llvm::Expected<std::string> createBundleObject(llvm::StringRef bundle,
                                               llvm::StringRef extensionObject);

/// The last component of a dotted module name: "kernels" for "pkg.kernels".
llvm::StringRef extensionBaseName(llvm::StringRef moduleName);

} // namespace kiln::backend
