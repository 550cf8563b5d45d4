//===- backend/cuda_tools/cuda_source.h - CUDA C/C++ files for link=[...] --*- C++ -*-===//
//
// A kernel may call device functions written in CUDA C/C++:
//
//   @cuda.jit(link=["helpers.cu"])
//
// compileCudaSource() compiles such a file with the toolkit's nvcc for one
// architecture into relocatable device code that nvjitlink.h links with
// Kiln's PTX. nvcc's objects (-dc) carry a module id made from its
// temporary file names, which differ on every run, so Kiln never asks nvcc
// for one: nvcc produces PTX (-ptx -rdc=true), and for a cubin Kiln
// assembles that PTX itself with ptxas -c on fixed file names. Both are
// reproducible byte for byte.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/nvjitlink.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::cuda_tools {

enum class CudaSourceOutput {
  /// A relocatable sm_<arch> cubin.
  RelocatableCubin,
  /// compute_<arch> PTX, for nvJitLink to assemble.
  Ptx,
};

struct CudaSourceOptions {
  /// -I directories and -D macros (NAME or NAME=VALUE).
  std::vector<std::string> includeDirectories;
  std::vector<std::string> defines;
  /// -O0 ... -O3 for ptxas (nvcc's device optimisation stays on unless debug).
  unsigned optimizationLevel = 3;
  bool lineInfo = false;
  /// -G: device debug information, no optimisation.
  bool debug = false;
  /// Passed to nvcc as they are (e.g. "-std=c++17", "--use_fast_math").
  std::vector<std::string> extraNvccFlags;
};

/// Compiles the .cu file at `sourcePath` for `arch`. The LinkInput's name is
/// the source's file name with .cubin or .ptx for its extension. Compiler
/// errors come back as an error quoting nvcc's messages.
llvm::Expected<LinkInput> compileCudaSource(const CudaToolkit &toolkit, llvm::StringRef sourcePath,
                                            unsigned arch, CudaSourceOutput output,
                                            const CudaSourceOptions &options = {});

} // namespace kiln::cuda_tools
