//===- frontend/resolve/prelude.cpp -----------------------------------------------===//

#include "frontend/resolve/prelude.h"

#include "frontend/prelude_sources.inc"

namespace kiln {

std::optional<llvm::StringRef> preludeSource(llvm::StringRef moduleName) {
  if (moduleName == "numba.cuda.random")
    return llvm::StringRef(numbaCudaRandomSource);
  if (moduleName == "kiln.cmath")
    return llvm::StringRef(kilnCmathSource);
  if (moduleName == "numba.cuda._internal.cuda_fp8")
    return llvm::StringRef(numbaCudaFp8Source);
  if (moduleName == "cuda.bindings.runtime")
    return llvm::StringRef(cudaBindingsRuntimeSource);
  return std::nullopt;
}

} // namespace kiln
