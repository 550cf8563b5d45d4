//===- pipeline/module_writer.h - Writing a built kernel module ---*- C++ -*-===//
//
// The last step of `kiln build --module pkg.kernels`: the object with the
// image and PyInit_, the object holding the bundle (manifest and fat
// binaries) in its non-allocated section .kiln.bundle (backend/
// extension_module.h) and the host objects are linked by LLD, in process,
// into DIR/kernels<EXT_SUFFIX>: first a temporary file in DIR, then renamed,
// so that a reader never sees half a module. Inputs are linked in manifest
// order and nothing depends on time or temporary names, so that the same
// inputs give the same bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/host/extension_module.h"

#include <llvm/Support/Error.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::pipeline {

struct ExtensionModuleInputs {
  std::string moduleName; // dotted
  /// The file's name before the extension suffix; empty for the module
  /// name's last part, as Python's import finds it.
  std::string fileStem;
  std::string manifest;
  /// One per image, in the order the manifest's offsets place them.
  std::vector<std::string> fatbins;
  /// backend::createExtensionObject() of the module's name and entries
  /// (in manifest order), which the build may have from its cache.
  std::string extensionObject;
  std::vector<std::string> hostObjects;
};

/// A module that stays Python (BuildOptions::moduleStaysPython) keeps its
/// kernels' build in a companion extension module beside it:
/// `pkg.kernels` -> `pkg._kernels_kiln`, in the file
/// `_kernels.kiln<EXT_SUFFIX>`, which no import statement finds by accident;
/// the module's dispatchers load it (kiln/dispatcher.py spells the same
/// rule).
std::string companionModuleName(llvm::StringRef moduleName);
std::string companionFileStem(llvm::StringRef moduleName);

/// Writes DIR/<fileStem><extensionSuffix>; returns its path.
/// Why `name` cannot name an extension module ("pkg.kernels": dotted ASCII
/// Python identifiers, since the init function is PyInit_<last part>), or
/// nothing when it can.
std::optional<std::string> moduleNameProblem(llvm::StringRef name);

/// The files beside the module at `modulePath` that CPython imports instead
/// of it: for `<stem>.abi3.so`, every `<stem>.cpython-*.so` in its folder
/// (an interpreter takes its own version's suffix before abi3), such as
/// the build of a Kiln that named modules per version. Sorted.
std::vector<std::string> shadowingBuilds(llvm::StringRef modulePath);

/// Takes `inputs` over, and lets go of each part once it is written: a
/// module of hundreds of kernels holds tens of megabytes of them.
llvm::Expected<std::string> writeExtensionModule(ExtensionModuleInputs inputs,
                                                 llvm::StringRef directory,
                                                 llvm::StringRef extensionSuffix);

} // namespace kiln::pipeline
