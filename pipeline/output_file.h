//===- pipeline/output_file.h - Writing a file a build produces --*- C++ -*-===//
//
// Every file a build writes goes through writeOutputFile: the file then holds
// either its new bytes in full or what it held before, never a part. A write
// that fails (a full disk, a file size limit) is an error naming the file
// and the reason — "out/k.ptx: No space left on device" — never a crash.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

namespace kiln::pipeline {

/// Writes `bytes` to `path`: into a new file beside it, renamed over `path`
/// once every byte is written. A path that exists and is not a regular file
/// (/dev/null) is written in place, as replacing it would be wrong. A new
/// file gets permissions `executable` ? 0777 : 0666, less the umask, as a
/// linker gives a shared library and a compiler any other output.
llvm::Error writeOutputFile(llvm::StringRef path, llvm::StringRef bytes, bool executable = false);

} // namespace kiln::pipeline
