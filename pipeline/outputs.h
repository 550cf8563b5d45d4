//===- pipeline/outputs.h - What a build writes ------------------*- C++ -*-===//
//
// The last step of a build: the files of the requested form (per
// specialization and architecture, or a fat binary per image), the manifest
// describing them, or one Python extension module holding everything; and a
// depfile for build systems.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/arch_list.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "frontend/frontend.h"
#include "ir/typed_ir.h"
#include "pipeline/pipeline.h"

#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::pipeline {

/// Files named in link=[...], relative to the kernel module's folder.
std::vector<std::string> linkFiles(const ir::Function &kernel, llvm::StringRef modulePath);

/// Writes `<module>.typed`.
llvm::Error writeTypedIR(const BuildOptions &options, const ir::Module &typed,
                         std::vector<std::string> &written);

/// The name of the extension module a `--module` build of `moduleName`
/// makes: the module's own, or its companion's where the module stays
/// Python (module_writer.h).
std::string extensionModuleName(const BuildOptions &options, llvm::StringRef moduleName);

/// Writes what `options.emit` asks for from `kernels` and their `images`,
/// in a stable order, appending each path to `written`. `archs` is null for
/// host-only builds; `extensionObject` is the module's
/// (backend::createExtensionObject) where `options.emit` asks for one.
llvm::Error writeOutputs(const BuildOptions &options, const CheckedModule *module,
                         llvm::StringRef moduleName, llvm::StringRef extensionSuffix,
                         const cuda_tools::ArchSelection *archs,
                         std::vector<KernelArtifacts> &kernels, std::vector<ImageArtifacts> &images,
                         std::string extensionObject, std::vector<std::string> &written);

} // namespace kiln::pipeline
