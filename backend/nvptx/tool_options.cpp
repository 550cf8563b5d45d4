//===- backend/nvptx/tool_options.cpp - Kernel options as CUDA tool options -----===//

#include "backend/nvptx/tool_options.h"

namespace kiln::backend {

cuda_tools::PtxasOptions ptxasOptionsFor(const JitOptions &options,
                                         llvm::ArrayRef<std::string> extraPtxasFlags) {
  cuda_tools::PtxasOptions ptxas;
  ptxas.optimizationLevel = options.optimize ? 3 : 0;
  ptxas.maxRegisters = options.maxRegisters.value_or(0);
  ptxas.lineInfo = options.lineinfo;
  // PTX with DWARF cannot be optimized by ptxas ("Optimized debugging not
  // supported"), so debug code is assembled with -g.
  ptxas.debug = options.debug;
  ptxas.extraFlags.assign(extraPtxasFlags.begin(), extraPtxasFlags.end());
  return ptxas;
}

cuda_tools::LinkOptions linkOptionsFor(const JitOptions &options,
                                       llvm::ArrayRef<std::string> extraPtxasFlags) {
  cuda_tools::LinkOptions link;
  link.optimizationLevel = options.optimize ? 3 : 0;
  link.maxRegisters = options.maxRegisters.value_or(0);
  link.lineInfo = options.lineinfo;
  link.debug = options.debug;
  link.extraPtxasFlags.assign(extraPtxasFlags.begin(), extraPtxasFlags.end());
  return link;
}

cuda_tools::CudaSourceOptions cudaSourceOptionsFor(const JitOptions &options) {
  cuda_tools::CudaSourceOptions source;
  source.optimizationLevel = options.optimize ? 3 : 0;
  source.lineInfo = options.lineinfo;
  source.debug = options.debug;
  return source;
}

} // namespace kiln::backend
