//===- backend/manifest.h - What a build holds, for the runtime -*- C++ -*-===//
//
// The manifest describes every kernel specialization of a built module: its
// Python name and kind (kernel, ufunc, reduction), argument types, entry
// name, parameter layout (docs/abi.md), shared and local memory, and the
// images built for it. The runtime packs arguments and picks images from the
// manifest alone, without the compiler. It is JSON, with keys in a fixed
// order, so that builds stay byte-identical.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/kernel_compiler.h"
#include "frontend/typed_ir.h"

#include <llvm/Support/raw_ostream.h>

#include <set>
#include <string>
#include <vector>

namespace kiln::backend {

struct ManifestEntry {
  const ir::Function *kernel;
  KernelInterface interface;
  /// Files written for this specialization, relative to the manifest.
  std::vector<std::string> files;
  std::set<unsigned> cubinArchs;
  std::set<unsigned> ptxArchs;
};

/// "kernel", "ufunc" or "reduction".
llvm::StringRef kernelKind(const ir::Function &kernel);

void writeManifest(llvm::raw_ostream &os, llvm::StringRef moduleName,
                   llvm::ArrayRef<ManifestEntry> entries);

} // namespace kiln::backend
