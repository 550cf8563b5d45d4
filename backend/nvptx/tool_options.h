//===- backend/nvptx/tool_options.h - Kernel options as CUDA tool options -*- C++ -*-===//
//
// A kernel's decorator options (`opt`, `debug`, `lineinfo`,
// `max_registers`), plus any `-Xptxas` flags from the command line, say
// how ptxas, nvJitLink and nvcc must treat its device code. One place maps
// them, so that every path to a cubin treats a kernel alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_source.h"
#include "backend/cuda_tools/nvjitlink.h"
#include "backend/cuda_tools/ptxas.h"
#include "ir/jit_options.h"

namespace kiln::backend {

cuda_tools::PtxasOptions ptxasOptionsFor(const JitOptions &options,
                                         llvm::ArrayRef<std::string> extraPtxasFlags = {});
cuda_tools::LinkOptions linkOptionsFor(const JitOptions &options,
                                       llvm::ArrayRef<std::string> extraPtxasFlags = {});
cuda_tools::CudaSourceOptions cudaSourceOptionsFor(const JitOptions &options);

} // namespace kiln::backend
