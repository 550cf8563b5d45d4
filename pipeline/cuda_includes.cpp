//===- pipeline/cuda_includes.cpp - Headers of CUDA C/C++ link files ------===//

#include "pipeline/cuda_includes.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <optional>

namespace kiln::pipeline {

namespace {

struct Include {
  std::string name;
  bool quoted;
};

/// `name` of `#include "name"` or `#include <name>` on `line`, if it is one.
std::optional<Include> includeOn(llvm::StringRef line) {
  line = line.ltrim();
  if (!line.consume_front("#"))
    return std::nullopt;
  line = line.ltrim();
  if (!line.consume_front("include"))
    return std::nullopt;
  line = line.ltrim();
  if (line.empty() || (line.front() != '"' && line.front() != '<'))
    return std::nullopt; // a computed include (`#include HEADER`)
  char close = line.front() == '"' ? '"' : '>';
  size_t end = line.find(close, 1);
  if (end == llvm::StringRef::npos)
    return std::nullopt;
  return Include{line.slice(1, end).str(), close == '"'};
}

std::optional<std::string> existingFile(llvm::StringRef directory, llvm::StringRef name) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  if (!llvm::sys::fs::is_regular_file(path))
    return std::nullopt;
  llvm::SmallString<256> absolute(path);
  if (llvm::sys::fs::make_absolute(absolute))
    return std::nullopt;
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return std::string(absolute);
}

} // namespace

std::vector<std::string> includedFiles(llvm::StringRef file,
                                       llvm::ArrayRef<std::string> includeDirectories) {
  llvm::StringSet<> seen;
  if (std::optional<std::string> self = existingFile("", file))
    seen.insert(*self);
  std::vector<std::string> found;
  std::vector<std::string> pending{file.str()};
  while (!pending.empty()) {
    std::string current = std::move(pending.back());
    pending.pop_back();
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
        llvm::MemoryBuffer::getFile(current, /*IsText=*/true);
    if (!text)
      continue; // an unreadable file is reported where it is compiled
    llvm::StringRef folder = llvm::sys::path::parent_path(current);
    llvm::SmallVector<llvm::StringRef, 0> lines;
    (*text)->getBuffer().split(lines, '\n');
    for (llvm::StringRef line : lines) {
      std::optional<Include> include = includeOn(line);
      if (!include)
        continue;
      std::optional<std::string> path =
          include->quoted ? existingFile(folder, include->name) : std::nullopt;
      for (const std::string &directory : includeDirectories)
        if (!path)
          path = existingFile(directory, include->name);
      if (path && seen.insert(*path).second) {
        found.push_back(*path);
        pending.push_back(*path);
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

} // namespace kiln::pipeline
