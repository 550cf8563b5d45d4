//===- backend/cuda_tools/ptxas.h - Assembling PTX into cubins with ptxas --*- C++ -*-===//
//
// One call assembles one PTX module for one real architecture:
//
//   PtxasOptions options;            // -O3 by default
//   llvm::Expected<AssembledCubin> cubin = assemblePtx(toolkit, ptx, 100, options);
//
// The PTX's .target may be older than the architecture (Kiln assembles sm_90
// PTX for sm_100 and newer); never newer. ptxas always runs with -v, so the
// result carries every function's registers, spills, stack and memory use.
// When ptxas rejects the PTX the error is a CudaToolError (ptxas_log.h)
// listing each problem with its PTX line.
//
// ptxas runs in a fresh temporary directory on fixed file names, so the
// cubin's bytes depend only on the PTX, the architecture and the options
// (with -g, ptxas records its command line, file names included, in the
// cubin).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/ptxas_log.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::cuda_tools {

struct PtxasOptions {
  /// ptxas -O0 ... -O3.
  unsigned optimizationLevel = 3;
  /// --maxrregcount; 0 leaves the choice to ptxas.
  unsigned maxRegisters = 0;
  /// -lineinfo: PTX line information for profilers.
  bool lineInfo = false;
  /// -g: full debug information. Implies -O0 (ptxas cannot optimise debug
  /// code), and includes line information.
  bool debug = false;
  /// Passed through as they are, like nvcc's -Xptxas (e.g. "--warn-on-spills",
  /// "-dlcm=ca"). Options that Kiln sets itself (the architecture, the input
  /// and output files) are refused.
  std::vector<std::string> extraFlags;
};

/// Checks `options` without running anything.
llvm::Error validatePtxasOptions(const PtxasOptions &options);

/// The ptxas arguments for `options` (not the architecture or files).
std::vector<std::string> ptxasFlags(const PtxasOptions &options);

struct AssembledCubin {
  /// The ELF bytes.
  std::string cubin;
  ResourceUsage usage;
  /// ptxas's warnings (e.g. spills with --warn-on-spills).
  std::vector<ToolMessage> warnings;
};

/// Assembles `ptx` into a cubin for sm_<arch>.
llvm::Expected<AssembledCubin> assemblePtx(const CudaToolkit &toolkit, llvm::StringRef ptx,
                                           unsigned arch, const PtxasOptions &options = {});

} // namespace kiln::cuda_tools
