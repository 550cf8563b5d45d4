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

#include <string>

namespace kiln::backend {

/// Links the ELF objects at `objectPaths` into a shared library written to
/// the new file `libraryPath` (a scratch file: the caller moves it into
/// place). LLD's messages, or the failed write, become the error.
llvm::Error linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths, llvm::StringRef libraryPath);

} // namespace kiln::backend
