//===- pipeline/project_settings.h - [tool.kiln] of a pyproject -*- C++ -*-===//
//
// A project keeps its build settings beside its code, in the pyproject.toml
// nearest to the kernel module (searched upwards):
//
//   [tool.kiln]
//   archs = "75;80;90"              # or a list: ["7.5", "8.0", "9.0+PTX"]
//   cache-dir = ".kiln-cache"       # relative to the pyproject.toml
//   cache-max-size = "4G"
//   remote-cache = "redis://cache.internal:6379|read-only"   # or a list
//   jobs = 4
//   opt = 3
//   max-registers = 64
//   fastmath = true
//   lineinfo = true
//   switchable-index-checks = true  # KILN_CPU_BOUNDSCHECK chooses at run time
//   ptxas-options = ["--warn-on-spills"]
//   modules = [{name = "pkg.kernels", source = "pkg/kernels.py", archs = "80"}]
//
// Each setting sits below the command line and the environment: `--arch`,
// then $CUDAARCHS, then a `modules` entry's archs for the module built, then
// `archs`, then Kiln's default; likewise --cache-dir, $KILN_CACHE_DIR,
// cache-dir; --max-size, $KILN_CACHE_MAX_SIZE, cache-max-size;
// --remote-cache, $KILN_REMOTE_CACHE, remote-cache. Options no variable
// sets (jobs, opt, ...) yield to their flag alone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::pipeline {

struct ProjectSettings {
  /// The pyproject.toml read; empty when there is none (every setting unset).
  std::string path;
  /// Where the settings came from, for messages: "[tool.kiln] of PATH".
  std::string origin() const;

  /// The arch list, as --arch takes it: the module's own, else the project's.
  std::optional<std::string> archs;
  /// Absolute.
  std::optional<std::string> cacheDirectory;
  std::optional<std::string> cacheMaxSize;
  std::optional<std::vector<std::string>> remoteCaches;
  std::optional<unsigned> jobs;
  std::optional<unsigned> opt;
  std::optional<unsigned> maxRegisters;
  std::optional<bool> fastmath;
  std::optional<bool> lineinfo;
  std::optional<bool> switchableIndexChecks;
  std::vector<std::string> ptxasOptions;
  /// Keys [tool.kiln] has that Kiln does not know, for a warning.
  std::vector<std::string> unknownKeys;
};

/// The settings of the pyproject.toml nearest to `folder`, for the module
/// `moduleName` (dotted; empty: no module's entry applies). No file, or no
/// [tool.kiln], is no error; a malformed one is, naming the file, the line
/// and the key.
llvm::Expected<ProjectSettings> readProjectSettings(llvm::StringRef folder,
                                                    llvm::StringRef moduleName);

} // namespace kiln::pipeline
