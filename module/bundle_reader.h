//===- module/bundle_reader.h - Finding a built module's bundle -*- C++ -*-===//
//
// `kiln inspect` reads a built module without importing it: the bundle is
// found by its magic among the file's bytes, then its header, sizes and
// manifest checksum are checked. Errors say what is damaged. (The bundle is
// the module's section .kiln.bundle, module/format.h; finding it by
// its magic rather than by the section headers, which follow it at the end
// of the file, still finds it in a file cut short, and says what is cut.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/format.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>

namespace kiln::module {

struct BundleView {
  /// Where the bundle starts in the file.
  uint64_t fileOffset = 0;
  KilnBundleHeader header;
  llvm::StringRef manifest;
  llvm::StringRef payload;
};

/// Finds and checks the bundle in the bytes of a built module. The views
/// point into `file`.
llvm::Expected<BundleView> findBundle(llvm::StringRef file);

} // namespace kiln::module
