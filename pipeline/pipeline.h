//===- pipeline/pipeline.h - One kernel module, built -----------*- C++ -*-===//
//
// The compile pipeline as a library: the `kiln` command and in-process
// callers build through this one entry point.
//
//   source ─check─▶ typed IR ─┬─ host object per specialization (CPU engine)
//                             └─ LLVM IR / PTX per specialization and PTX target
//   ─▶ per image: PTX per PTX target (its kernels linked) ─ cubin per real arch ─ fatbin
//   ─▶ files of the requested form and a manifest, or one Python extension module
//
// Work runs in parallel phases (code, linking, cubins, fat binaries); each
// task has its own LLVMContext and only reads the typed IR or the code of
// the phase before, and each goes through the specialization cache
// (pipeline/cached_step.h). An image's PTX is looked up in the cache before
// the code phase: where it is found, its kernels' device code is not needed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/kernel_compiler.h"
#include "backend/nvptx/cubin_builder.h"
#include "frontend/frontend.h"
#include "ir/typed_ir.h"
#include "pipeline/build_options.h"
#include "pipeline/build_reporter.h"

#include <llvm/Support/Error.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::pipeline {

/// One step of a specialization's build: where its result came from and
/// how long it took.
struct BuildStep {
  /// "host", "ptx", "llvm", "cubin", "fatbin".
  std::string kind;
  /// "sm_80", the host's target triple, or "-" for a fat binary.
  std::string target;
  /// "hit", "remote hit", "miss" (compiled, then stored) or "uncached".
  std::string cache;
  uint64_t microseconds = 0;
};

/// One kernel specialization and everything built for it.
struct KernelArtifacts {
  const ir::Function *kernel;
  /// File names start with this: "add.0" for the first specialization.
  std::string stem;
  /// "kernel 'add' (float32[::1], int64)", for messages.
  std::string description;
  /// "add(float32[::1], int64)", for progress lines.
  std::string progressName;
  /// By .target: PTX, or optimized LLVM IR (for EmitKind::LLVM, and for
  /// kernels whose image links them, whose IR is released once linked).
  std::map<unsigned, backend::CompiledCode> ptx;
  std::optional<backend::CompiledCode> host;
  /// The image its device code is loaded from (BuildResult::images).
  std::optional<size_t> image;
  /// Per sm_ of its image's cubins: what ptxas reported for the kernel's
  /// entry function, or nothing when the report does not name it.
  std::map<unsigned, std::optional<cuda_tools::FunctionResources>> resources;
  /// In the order of the build's phases, then by target.
  std::vector<BuildStep> steps;

  /// The resources ptxas reported, per sm_.
  std::map<unsigned, cuda_tools::FunctionResources> entryResources() const;
  /// What the runtime needs to know of the kernel: from its device code
  /// where it has some, else from its host code.
  const backend::KernelInterface &interface() const {
    return ptx.empty() ? host->interface : ptx.begin()->second.interface;
  }
};

/// Kernels whose device code is loaded together, and what was built for
/// them. A module's fat binary holds all its kernels that compile with the
/// same options: one code generation per PTX target over their linked LLVM
/// IR, one ptxas run per architecture, one fat binary, which the runtime
/// loads once. Where each specialization has files of its own (cubins, and
/// PTX with --resource-usage), each is an image of one kernel and its PTX.
struct ImageArtifacts {
  /// Indices of its kernels in BuildResult::kernels, in order.
  std::vector<size_t> members;
  /// Whether its PTX is its members' LLVM IR linked, not one kernel's PTX.
  bool linked = false;
  /// File names start with this: the module's name ("kernels", then
  /// "kernels.1", ...) or, for an image of one kernel's PTX, its stem.
  std::string stem;
  /// "kernel 'add' (float32[::1])" or "the image 'kernels' of 12 kernels".
  std::string description;
  /// For progress lines.
  std::string progressName;
  const JitOptions *options = nullptr;
  std::vector<std::string> linkFiles;
  /// By .target and by sm_; both released once the fat binary holds them.
  std::map<unsigned, std::string> ptx;
  std::map<unsigned, std::string> cubins;
  std::map<unsigned, cuda_tools::ResourceUsage> usage; // by sm_
  std::string fatbin;
  std::vector<BuildStep> steps;
};

struct BuildResult {
  /// The checked module (none when building typed IR read from text), the
  /// types of typed IR read from text, and the typed IR, which `kernels`
  /// point into.
  std::unique_ptr<CheckedModule> checked;
  std::unique_ptr<TypeContext> types;
  std::unique_ptr<ir::Module> typed;
  std::vector<KernelArtifacts> kernels;
  std::vector<ImageArtifacts> images;
  /// The files written, in a stable order.
  std::vector<std::string> written;
};

/// The build failed on diagnostics in the kernel module, which the
/// reporter has already been given.
class SourceDiagnosedError : public llvm::ErrorInfo<SourceDiagnosedError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
};

/// Whether `path` names printed typed IR (`--emit typed` writes NAME.typed),
/// which buildModule reads instead of Python source.
bool isTypedIRFile(llvm::StringRef path);

/// Builds `options.file` (Python source, or printed typed IR) in the form `options.emit` asks for
/// and writes the result to `options.outputDirectory`. Failures of tools, files and compilation
/// come back as errors, one per failed task, in a stable order.
llvm::Expected<BuildResult> buildModule(const BuildOptions &options, BuildReporter &reporter);

} // namespace kiln::pipeline
