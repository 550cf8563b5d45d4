//===- pipeline/source_paths.cpp ------------------------------------------===//

#include "pipeline/source_paths.h"

#include "support/nearest_file.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace kiln::pipeline {

namespace {

std::string absoluteWithoutDots(llvm::StringRef path) {
  llvm::SmallString<256> absolute(path.empty() ? "." : path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return absolute.str().str();
}

bool holds(llvm::StringRef folder, llvm::StringRef file) {
  if (folder.empty())
    return false;
  return folder == "/" ||
         (file.starts_with(folder) && file.drop_front(folder.size()).starts_with("/"));
}

/// The folder above the top-level package of the module `moduleName` at
/// `file`: one folder up from the file's own per dot in the name.
std::string packageRoot(llvm::StringRef file, llvm::StringRef moduleName) {
  llvm::SmallString<256> folder(llvm::sys::path::parent_path(file));
  for (size_t dots = llvm::count(moduleName, '.');
       dots > 0 && llvm::sys::path::has_parent_path(folder); --dots)
    llvm::sys::path::remove_filename(folder);
  return folder.str().str();
}

} // namespace

std::string projectRoot(const BuildOptions &options) {
  std::string file = absoluteWithoutDots(options.file);
  if (!options.projectRoot.empty())
    if (std::string given = absoluteWithoutDots(options.projectRoot); holds(given, file))
      return given;
  std::string pyproject =
      support::findNearestFile(llvm::sys::path::parent_path(file), "pyproject.toml");
  if (!pyproject.empty())
    return llvm::sys::path::parent_path(pyproject).str();
  return packageRoot(file, options.effectiveModuleName());
}

FilePrefixMap recordedPathMap(const BuildOptions &options) {
  FilePrefixMap map;
  map.addRoot(projectRoot(options));
  for (const std::string &entry : options.filePrefixMaps)
    if (std::optional<std::pair<std::string, std::string>> parsed = FilePrefixMap::parse(entry))
      map.add(parsed->first, parsed->second);
  return map;
}

} // namespace kiln::pipeline
