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

/// Links the ELF objects at `objectPaths` into a shared library, returned as
/// bytes for the caller to write. LLD's messages become the error.
llvm::Expected<std::string> linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths);

} // namespace kiln::backend
