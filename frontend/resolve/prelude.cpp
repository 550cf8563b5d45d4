//===- frontend/resolve/prelude.cpp -----------------------------------------------===//

#include "frontend/resolve/prelude.h"

#include "frontend/prelude_sources.inc"

namespace kiln {

std::optional<llvm::StringRef> preludeSource(llvm::StringRef moduleName) {
  if (moduleName == "numba.cuda.random")
    return llvm::StringRef(numbaCudaRandomSource);
  if (moduleName == "kiln.cmath")
    return llvm::StringRef(kilnCmathSource);
  return std::nullopt;
}

} // namespace kiln
