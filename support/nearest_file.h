//===- support/nearest_file.h - Files up a folder tree ---------*- C++ -*-===//
//
// Projects are found by their files: pyproject.toml and kiln-signatures.toml
// nearest to a kernel module, looked for in its folder and then each folder
// above it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <string>

namespace kiln::support {

/// The file `name` in `folder` (default: the current folder) or the nearest
/// folder above it, absolute; empty when there is none.
std::string findNearestFile(llvm::StringRef folder, llvm::StringRef name);

} // namespace kiln::support
