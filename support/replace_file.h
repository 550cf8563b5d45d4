//===- support/replace_file.h - Replacing a file in one rename ---*- C++ -*-===//
//
// A file that other processes read while Kiln rewrites it (trusted keys,
// recorded signatures, the toolkit versions ptxas reported) is written
// whole into a temporary file beside it and renamed over it, so that a
// reader sees the old file or the new one, never part of one, and a
// failed write leaves the old file as it was.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <optional>

namespace kiln::support {

struct ReplaceFileOptions {
  /// Create the folders the file goes in where they are missing.
  bool createFolders = false;
  /// The mode a new file gets; by default, read and write for all less the
  /// umask. A replaced file keeps its own.
  std::optional<unsigned> newFileMode;
};

/// Replaces (or creates) `path` with `bytes`. The error names `path` (or
/// the folder it could not create): "cannot write 'PATH': REASON".
llvm::Error replaceFile(llvm::StringRef path, llvm::StringRef bytes,
                        const ReplaceFileOptions &options = {});

} // namespace kiln::support
