//===- pipeline/depfile.cpp - Dependency files for build systems ------------===//

#include "pipeline/depfile.h"

#include "frontend/resolve/build_config.h"
#include "pipeline/output_file.h"
#include "support/dynamic_library.h"
#include "support/nearest_file.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <utility>

namespace kiln::pipeline {

namespace {

std::string absolute(llvm::StringRef path) {
  llvm::SmallString<256> result(path);
  llvm::sys::fs::make_absolute(result);
  llvm::sys::path::remove_dots(result, /*remove_dot_dot=*/true);
  return result.str().str();
}

void writeEscaped(llvm::raw_ostream &os, llvm::StringRef path) {
  for (char c : path) {
    if (c == ' ' || c == '#' || c == '\\')
      os << '\\';
    else if (c == '$')
      os << '$';
    os << c;
  }
}

int anchor;

} // namespace

std::vector<std::string> buildInputs(llvm::StringRef modulePath,
                                     llvm::ArrayRef<std::string> otherFiles) {
  std::vector<std::string> inputs{absolute(modulePath)};
  for (llvm::StringRef config : {"pyproject.toml", "kiln-signatures.toml"})
    if (std::string path =
            support::findNearestFile(llvm::sys::path::parent_path(absolute(modulePath)), config);
        !path.empty())
      inputs.push_back(path);
  for (const std::string &file : otherFiles)
    if (llvm::sys::fs::exists(file))
      inputs.push_back(absolute(file));
  std::string executable = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  if (!executable.empty())
    inputs.push_back(absolute(executable));
  // The file holding kiln's code: the executable again, or the shared
  // compiler library the command of a wheel loads.
  if (std::string code = support::fileHolding(&anchor); !code.empty())
    inputs.push_back(std::move(code));
  llvm::sort(inputs);
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  return inputs;
}

llvm::Error writeDepfile(llvm::StringRef path, llvm::ArrayRef<std::string> targets,
                         llvm::ArrayRef<std::string> dependencies) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (size_t i = 0; i < targets.size(); ++i) {
    if (i)
      os << ' ';
    writeEscaped(os, absolute(targets[i]));
  }
  os << ':';
  for (const std::string &dependency : dependencies) {
    os << " \\\n  ";
    writeEscaped(os, dependency);
  }
  os << '\n';

  if (llvm::StringRef folder = llvm::sys::path::parent_path(path); !folder.empty())
    if (std::error_code error = llvm::sys::fs::create_directories(folder, /*IgnoreExisting=*/true,
                                                                  llvm::sys::fs::all_all))
      return llvm::createStringError(error, "cannot create the folder of the depfile '" +
                                                path.str() + "': " + error.message());
  return writeOutputFile(path, text);
}

} // namespace kiln::pipeline
