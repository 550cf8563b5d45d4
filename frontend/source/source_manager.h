//===- frontend/source/source_manager.h ------------------------*- C++ -*-===//
//
// Every diagnostic and every AST node points into a source file through a
// SourceLoc: a file id plus a byte offset. The SourceManager owns the file
// contents and turns locations into the line and column a user sees.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/source/file_prefix_map.h"

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// A position in a source file. File id 0 means "no position" (e.g. types
/// that came from the command line rather than from a file).
struct SourceLoc {
  uint32_t file = 0;
  uint32_t offset = 0;

  bool isValid() const { return file != 0; }
  SourceLoc advancedBy(uint32_t bytes) const { return {file, offset + bytes}; }
};

/// A half-open byte range [begin, end) in one file.
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;

  SourceRange() = default;
  SourceRange(SourceLoc b, SourceLoc e) : begin(b), end(e) {}
  explicit SourceRange(SourceLoc at) : begin(at), end(at) {}
  bool isValid() const { return begin.isValid(); }
  /// The smallest range covering both.
  static SourceRange join(SourceRange a, SourceRange b) {
    if (!a.isValid())
      return b;
    if (!b.isValid())
      return a;
    return {a.begin.offset <= b.begin.offset ? a.begin : b.begin,
            a.end.offset >= b.end.offset ? a.end : b.end};
  }
};

/// 1-based line and column; columns count Unicode code points, as Python's
/// own error messages do.
struct LineColumn {
  unsigned line = 0;
  unsigned column = 0;
};

class SourceManager {
public:
  /// Registers a file and returns its id (never 0).
  uint32_t addFile(std::string path, std::string contents);

  /// The path as given, which diagnostics show and files are read by.
  llvm::StringRef path(uint32_t file) const { return fileAt(file).path; }
  /// The path as a build records it in what it writes (see FilePrefixMap).
  std::string recordedPath(uint32_t file) const { return prefixMap.remap(path(file)); }
  void setPrefixMap(FilePrefixMap map) { prefixMap = std::move(map); }
  llvm::StringRef contents(uint32_t file) const { return fileAt(file).contents; }
  llvm::StringRef textOf(SourceRange range) const;

  LineColumn lineColumn(SourceLoc loc) const;
  /// The text of a 1-based line, without its line terminator.
  llvm::StringRef lineText(uint32_t file, unsigned line) const;
  /// Byte offset at which a 1-based line starts.
  uint32_t lineStart(uint32_t file, unsigned line) const;

private:
  struct File {
    std::string path;
    std::string contents;
    std::vector<uint32_t> lineStarts;
  };
  const File &fileAt(uint32_t id) const { return *files[id - 1]; }

  std::vector<std::unique_ptr<File>> files;
  FilePrefixMap prefixMap;
};

/// Number of code points in a UTF-8 byte string; continuation bytes do not
/// start a new column.
unsigned countCodePoints(llvm::StringRef text);

} // namespace kiln
