//===- frontend/resolve/prelude.h ------------------------------*- C++ -*-===//
//
// Parts of Numba that are themselves Python device functions (the
// xoroshiro128p generator of numba.cuda.random) are provided by Kiln as
// kernel modules of its own, compiled like user code. Their sources are
// embedded in the binary (frontend/prelude/*.py).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <optional>

namespace kiln {

/// The source of Kiln's implementation of `moduleName`, if it has one.
std::optional<llvm::StringRef> preludeSource(llvm::StringRef moduleName);

} // namespace kiln
