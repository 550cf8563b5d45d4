//===- pipeline/cuda_includes.h - Headers of CUDA C/C++ link files -*- C++ -*-===//
//
// The code compiled from a CUDA C/C++ file that kernels link depends on the
// headers it includes as much as on the file itself, so the cache keys of
// that code and the build's dependency file name them too. Finding them
// takes no compiler: a textual scan of `#include` lines, resolved as nvcc
// and clang resolve them against the file's folder and the build's include
// folders. Every `#include` line counts, whether the preprocessor would
// reach it or not: a build may then recompile more than it needed, but it
// never reuses code compiled against an older header.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace kiln::pipeline {

/// The files `file` includes, directly or through the files it includes:
/// a quoted name looked up in the including file's folder, then in
/// `includeDirectories`; a bracketed name in `includeDirectories` only.
/// Absolute, sorted and unique, without `file`. Headers found in neither
/// (the CUDA toolkit's, the C++ library's) are not listed: keys name the
/// toolkit and the compiler instead.
std::vector<std::string> includedFiles(llvm::StringRef file,
                                       llvm::ArrayRef<std::string> includeDirectories);

} // namespace kiln::pipeline
