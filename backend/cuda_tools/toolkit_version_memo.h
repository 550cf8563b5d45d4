//===- backend/cuda_tools/toolkit_version_memo.h - What ptxas said -*- C++ -*-===//
//
// A toolkit without version.json (NVIDIA's pip wheels, some conda
// packages) tells its version only through `ptxas --version`: a process
// to start, which a warm build would otherwise pay every time. The memo
// keeps what ptxas reported in a small JSON file (the build cache's folder
// holds it), for the ptxas file as it was: its path, size, modification
// time and inode, as ccache's default compiler check does (with the
// inode, a ptxas replaced within one tick of the clock is still told
// apart). A ptxas replaced or touched is asked again.
//
// The memo is a shortcut and nothing more: a file that cannot be read,
// written or parsed is as good as an empty one, and never fails a build.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_toolkit.h"

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>

namespace kiln::cuda_tools {

class ToolkitVersionMemo {
public:
  /// The memo kept in the file `path`, which need not exist yet.
  explicit ToolkitVersionMemo(std::string path) : path(std::move(path)) {}

  /// The version `ptxas` reported when it was last asked, if the file is
  /// still the one that was asked.
  std::optional<CudaVersion> recall(llvm::StringRef ptxas) const;
  /// Records what `ptxas` reported, replacing the file atomically.
  void remember(llvm::StringRef ptxas, const CudaVersion &version) const;

  /// How many ptxas files the memo keeps, the most recently asked first.
  static constexpr size_t capacity = 16;

private:
  std::string path;
};

} // namespace kiln::cuda_tools
