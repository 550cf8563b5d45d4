//===- frontend/source/source_file.h - Reading a source file -----*- C++ -*-===//
//
// Kernel modules and configuration files are read whole. Only regular files
// are: a device never ends (/dev/zero) and a FIFO without a writer blocks
// forever, so either is an error naming the path instead of a hang.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/ErrorOr.h>

#include <string>

namespace kiln {

/// The contents of the regular file at `path`; for anything else
/// errc::invalid_argument, which readErrorMessage() words.
llvm::ErrorOr<std::string> readSourceFile(llvm::StringRef path);

/// Why reading failed, for "cannot read 'PATH': WHY".
std::string readErrorMessage(std::error_code error);

} // namespace kiln
