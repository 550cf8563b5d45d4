//===- backend/host/host_library.h - Linking host code into a library -*- C++ -*-===//
//
// The CPU engine loads kernels' host code from a shared library. Kiln links
// host objects with LLD, in process, so that no system linker is needed.
// Math functions stay undefined and resolve to the C library of the
// process that loads the library (every Python process has libm loaded).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>

namespace kiln::backend {

/// A symbol the link defines with a value (ELF's SHN_ABS), as LLD's
/// --defsym does: a number the objects refer to as a symbol's address,
/// written into their data by the linker. Referred to with hidden
/// visibility, it stays out of the library's exports.
struct AbsoluteSymbol {
  std::string name;
  uint64_t value = 0;
};

/// Links the ELF objects at `objectPaths` into a shared library written to
/// the new file `libraryPath` (a scratch file: the caller moves it into
/// place), defining `symbols`. LLD's messages, or the failed write, become
/// the error.
llvm::Error linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths, llvm::StringRef libraryPath,
                              llvm::ArrayRef<AbsoluteSymbol> symbols = {});

} // namespace kiln::backend
