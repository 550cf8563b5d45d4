//===- module/module_reader.h - A built module's manifest -------*- C++ -*-===//
//
// `kiln inspect` and `kiln audit` read built modules without loading them:
// readModule() finds the bundle in the module's bytes (bundle_reader.h),
// parses the manifest, checks its format and every fat binary's checksum,
// and groups the specializations by kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/bundle_reader.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <string>
#include <vector>

namespace kiln::bundle {

/// A kernel and its specializations, in manifest order.
struct KernelGroup {
  std::string name;
  std::string kind;
  std::vector<const llvm::json::Object *> specializations;
};

/// The manifest, parsed, with every fat binary checked against the payload.
struct InspectedModule {
  BundleView bundle;
  llvm::json::Value manifest = nullptr;
  std::vector<KernelGroup> kernels;
};

/// Finds the bundle in `file` (a module's bytes, or its .kiln.bundle
/// section), parses and checks the manifest and the fat binaries. Errors
/// say what is damaged.
llvm::Expected<InspectedModule> readModule(llvm::StringRef file);

/// "add (array(float32, 1d, C), int64)": a specialization, for messages.
std::string describeSpecialization(const llvm::json::Object &spec);

} // namespace kiln::bundle
