//===- backend/nvptx/cubin_builder.h - A kernel's PTX to a cubin ------*- C++ -*-===//
//
// The cubin of a kernel specialization for one architecture comes from its
// PTX: through ptxas, or, when the kernel links other device code
// (`link=[...]`), through nvJitLink together with those files: PTX, cubins,
// fat binaries, objects, archives, LTO-IR, and CUDA C/C++ sources, which
// nvcc compiles for the architecture. A .cu file is compiled once per
// architecture however many kernels link it. Safe to use from many threads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/nvjitlink.h"
#include "backend/cuda_tools/ptxas_log.h"
#include "ir/jit_options.h"

#include <llvm/Support/Error.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::backend {

struct BuiltCubin {
  std::string cubin;
  cuda_tools::ResourceUsage usage;
};

class CubinBuilder {
public:
  /// `includeDirectories`: searched for `#include <...>` in .cu link files.
  CubinBuilder(const cuda_tools::CudaToolkit &toolkit,
               std::vector<std::string> extraPtxasFlags = {},
               std::vector<std::string> includeDirectories = {})
      : toolkit(toolkit), extraPtxasFlags(std::move(extraPtxasFlags)),
        includeDirectories(std::move(includeDirectories)) {}

  /// `ptx` (named `ptxName` in tool messages) of a kernel compiled with
  /// `options`, as a cubin for sm_<arch>, linked with `linkFiles` (paths).
  llvm::Expected<BuiltCubin> build(const JitOptions &options, llvm::StringRef ptx,
                                   llvm::StringRef ptxName, unsigned arch,
                                   llvm::ArrayRef<std::string> linkFiles);

private:
  llvm::Expected<cuda_tools::LinkInput> linkInput(const JitOptions &options,
                                                  const std::string &path, unsigned arch);

  /// nvJitLink, loaded on first use; null (and why) when it cannot be.
  const cuda_tools::NvJitLink *loadLinker(std::string *whyNot);

  struct CompiledSource;
  const cuda_tools::CudaToolkit &toolkit;
  std::vector<std::string> extraPtxasFlags;
  std::vector<std::string> includeDirectories;
  std::mutex mutex;
  std::map<std::tuple<std::string, unsigned, bool, bool, bool>, std::shared_ptr<CompiledSource>>
      sources;
  std::optional<llvm::Expected<cuda_tools::NvJitLink>> linker;
  std::optional<std::string> linkerError;
};

} // namespace kiln::backend
