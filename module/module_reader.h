//===- module/module_reader.h - A built module's manifest -------*- C++ -*-===//
//
// The driver's one reader of built modules and their manifests: `kiln
// inspect` and `kiln audit` read built modules without loading them.
// readModule() checks the module's bytes as the runtime does before an
// import (module_check.h), then reads the manifest into the records the
// writer takes (manifest_writer.h) and groups the specializations by
// kernel. Keys are spelled only through the schema (manifest_keys.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/bundle_reader.h"
#include "module/manifest_writer.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::module {

/// A manifest, as the records writeManifest() writes it from.
struct ManifestRecords {
  ManifestModule module;
  std::vector<ManifestSpecialization> specializations;
};

/// A kernel and its specializations, in manifest order.
struct KernelGroup {
  std::string name;
  std::string kind;
  /// Indices into ManifestRecords::specializations.
  std::vector<size_t> specializations;
};

/// A module that passed checkModule(), with its manifest read.
struct InspectedModule {
  BundleView bundle;
  ManifestRecords manifest;
  std::vector<KernelGroup> kernels;

  const ManifestSpecialization &specialization(size_t index) const {
    return manifest.specializations[index];
  }
};

/// Reads the parsed manifest `manifest` into records. A key that is absent
/// (or null) keeps the record's default, as the writer leaves out what a
/// record does not have (a fat binary, resources, launch bounds); so does a
/// key of another kind than the schema's, since the runtime's check, which
/// vouches for every key the runtime reads, judges a module alone. A
/// manifest of another format, or no object, is an error. Resources are
/// ordered by architecture, as the writer is given them.
llvm::Expected<ManifestRecords> readManifestRecords(const llvm::json::Value &manifest);

/// Checks the module file `file` (its bytes) and reads its manifest. Errors
/// say what is damaged or incompatible.
llvm::Expected<InspectedModule> readModule(llvm::StringRef file);

/// Reads the manifest of the module file `file` whose bundle,
/// `checkedBundle` (a part of `file`), checkModuleFile() found sound.
llvm::Expected<InspectedModule> readCheckedModule(llvm::StringRef file,
                                                  std::string_view checkedBundle);

/// "add (array(float32, 1d, C), int64)": a specialization, for messages.
std::string describeSpecialization(const ManifestSpecialization &spec);

} // namespace kiln::module
