//===- module/module_reader.h - A built module's manifest -------*- C++ -*-===//
//
// `kiln inspect` and `kiln audit` read built modules without loading them:
// readModule() checks the module's bytes as the runtime does before an
// import (module_check.h), then parses the manifest and groups the
// specializations by kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/bundle_reader.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <string>
#include <string_view>
#include <vector>

namespace kiln::bundle {

/// A kernel and its specializations, in manifest order.
struct KernelGroup {
  std::string name;
  std::string kind;
  std::vector<const llvm::json::Object *> specializations;
};

/// The manifest of a module that passed checkModule(), parsed.
struct InspectedModule {
  BundleView bundle;
  llvm::json::Value manifest = nullptr;
  std::vector<KernelGroup> kernels;
};

/// Checks the module file `file` (its bytes) and reads its manifest. Errors
/// say what is damaged or incompatible.
llvm::Expected<InspectedModule> readModule(llvm::StringRef file);

/// Reads the manifest of the module file `file` whose bundle,
/// `checkedBundle` (a part of `file`), checkModuleFile() found sound.
llvm::Expected<InspectedModule> readCheckedModule(llvm::StringRef file,
                                                  std::string_view checkedBundle);

/// "add (array(float32, 1d, C), int64)": a specialization, for messages.
std::string describeSpecialization(const llvm::json::Object &spec);

} // namespace kiln::bundle
