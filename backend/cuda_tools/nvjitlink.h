//===- backend/cuda_tools/nvjitlink.h - Linking device code with nvJitLink -*- C++ -*-===//
//
// Kernels may call device functions from other files (`link=[...]` in the
// decorator): CUDA C/C++ compiled by nvcc (see cuda_source.h), PTX, cubins,
// fat binaries, objects and archives with device code, or LTO-IR. nvJitLink
// links Kiln's PTX with them into one cubin per architecture, in process.
// It is also an in-process alternative to ptxas for PTX alone.
//
// libnvJitLink.so is not linked into kiln: it is loaded from the toolkit
// found at run time (cuda_toolkit.h) with dlopen, once per process.
//
//   llvm::Expected<NvJitLink> linker = NvJitLink::load(toolkit);
//   llvm::Expected<LinkedCubin> cubin =
//       linker->link(100, {{LinkInputKind::Ptx, "kernels.ptx", ptx}, *helper}, {});
//
// Failures are CudaToolError (ptxas_log.h) carrying nvJitLink's error log.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/ptxas_log.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::cuda_tools {

enum class LinkInputKind { Ptx, Cubin, Fatbin, Object, Library, LtoIr };

/// "PTX", "cubin", "fat binary", "object", "library", "LTO-IR".
llvm::StringRef linkInputKindName(LinkInputKind kind);

/// The kind a file name implies: .ptx, .cubin, .fatbin, .o, .a, .ltoir.
llvm::Expected<LinkInputKind> linkInputKindForPath(llvm::StringRef path);

struct LinkInput {
  LinkInputKind kind = LinkInputKind::Ptx;
  /// Given to nvJitLink and shown in its messages: a file name, never a
  /// temporary path (it may end up in the cubin's debug information).
  std::string name;
  /// The file's bytes.
  std::string data;
};

/// Reads a link input; its name is the file name without directories.
llvm::Expected<LinkInput> readLinkInput(llvm::StringRef path);

struct LinkOptions {
  /// -O0 ... -O3 for the PTX inputs.
  unsigned optimizationLevel = 3;
  /// -maxrregcount; 0 leaves the choice to the linker.
  unsigned maxRegisters = 0;
  bool lineInfo = false;
  /// -g; implies -O0.
  bool debug = false;
  /// Passed to the PTX assembler, each as -Xptxas=<flag>.
  std::vector<std::string> extraPtxasFlags;
};

struct LinkedCubin {
  std::string cubin;
  /// From nvJitLink's verbose log: ptxas's report on each PTX input and the
  /// linker's on the linked functions.
  ResourceUsage usage;
  std::vector<ToolMessage> warnings;
};

class NvJitLink {
public:
  /// Loads the toolkit's libnvJitLink.
  static llvm::Expected<NvJitLink> load(const CudaToolkit &toolkit);
  static llvm::Expected<NvJitLink> load(llvm::StringRef libraryPath);

  /// The library's own version (nvJitLinkVersion), e.g. 13.0.
  CudaVersion version() const;
  const std::string &libraryPath() const;

  /// Links `inputs` into a cubin for sm_<arch>. PTX inputs may have an older
  /// .target than `arch`; cubins and the device code in objects, archives and
  /// fat binaries must be for `arch` itself.
  llvm::Expected<LinkedCubin> link(unsigned arch, llvm::ArrayRef<LinkInput> inputs,
                                   const LinkOptions &options = {}) const;

  struct Api; // the library's entry points

private:
  explicit NvJitLink(std::shared_ptr<const Api> api) : api(std::move(api)) {}
  std::shared_ptr<const Api> api;
};

/// The nvJitLink options for `options` and `arch` (without -lto and -verbose).
std::vector<std::string> nvJitLinkFlags(unsigned arch, const LinkOptions &options);

} // namespace kiln::cuda_tools
