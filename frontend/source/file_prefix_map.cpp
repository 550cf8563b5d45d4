//===- frontend/source/file_prefix_map.cpp --------------------------------===//

#include "frontend/source/file_prefix_map.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace kiln {

namespace {

std::string absoluteWithoutDots(llvm::StringRef path) {
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return absolute.str().str();
}

} // namespace

std::optional<std::pair<std::string, std::string>> FilePrefixMap::parse(llvm::StringRef entry) {
  size_t equals = entry.find('=');
  if (equals == llvm::StringRef::npos)
    return std::nullopt;
  return std::make_pair(entry.take_front(equals).str(), entry.drop_front(equals + 1).str());
}

void FilePrefixMap::add(llvm::StringRef oldPrefix, llvm::StringRef newPrefix) {
  std::string old = oldPrefix.str();
  if (!old.empty() && llvm::sys::path::is_relative(old)) {
    old = absoluteWithoutDots(oldPrefix);
    if (oldPrefix.ends_with("/") && !llvm::StringRef(old).ends_with("/"))
      old += '/';
  }
  entries.emplace_back(std::move(old), newPrefix.str());
}

void FilePrefixMap::addRoot(llvm::StringRef root) {
  std::string folder = absoluteWithoutDots(root);
  if (!llvm::StringRef(folder).ends_with("/"))
    folder += '/';
  entries.emplace_back(std::move(folder), "");
}

std::string FilePrefixMap::remap(llvm::StringRef path) const {
  if (entries.empty() || path.empty() || path.starts_with("<"))
    return path.str();
  std::string absolute = absoluteWithoutDots(path);
  for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry)
    if (llvm::StringRef(absolute).starts_with(entry->first))
      return entry->second + absolute.substr(entry->first.size());
  return path.str();
}

} // namespace kiln
