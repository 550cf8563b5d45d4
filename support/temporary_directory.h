//===- support/temporary_directory.h - Scratch space for tool runs -*- C++ -*-===//
//
// The CUDA tools (ptxas, fatbinary, nvcc) read and write files. Each run
// gets a fresh directory inside the process's temporary folder
// (process_scratch.h), removed with everything in it when the
// TemporaryDirectory goes away, so that no run leaves files behind.
//
// Inside the directory files have fixed names ("kernel.ptx"), never random
// ones: tools that record their file names in what they produce (ptxas -g
// does) then produce the same bytes on every run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::support {

class TemporaryDirectory {
public:
  /// Creates <process temp folder>/<prefix>-XXXXXX.
  static llvm::Expected<TemporaryDirectory> create(llvm::StringRef prefix);

  TemporaryDirectory(TemporaryDirectory &&other) noexcept;
  TemporaryDirectory &operator=(TemporaryDirectory &&other) noexcept;
  TemporaryDirectory(const TemporaryDirectory &) = delete;
  TemporaryDirectory &operator=(const TemporaryDirectory &) = delete;
  /// Removes the directory and everything in it.
  ~TemporaryDirectory();

  const std::string &path() const { return directory; }
  /// The path of `name` inside the directory.
  std::string file(llvm::StringRef name) const;
  /// Writes `contents` (any bytes) to `name` inside the directory.
  llvm::Error write(llvm::StringRef name, llvm::StringRef contents) const;
  /// Reads `name` inside the directory.
  llvm::Expected<std::string> read(llvm::StringRef name) const;

private:
  explicit TemporaryDirectory(std::string directory) : directory(std::move(directory)) {}
  std::string directory;
};

/// Reads a whole regular file as bytes; anything else (a device, a FIFO) is
/// an error rather than a read that never ends.
llvm::Expected<std::string> readFileBytes(llvm::StringRef path);

} // namespace kiln::support
