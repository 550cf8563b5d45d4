//===- driver/build_command.h - `kiln build` --------------------*- C++ -*-===//
#pragma once

#include "pipeline/build_options.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::driver {

using pipeline::EmitKind;

/// What to build (pipeline::BuildOptions), and how the command shows it.
struct BuildOptions : pipeline::BuildOptions {
  bool verbose = false;
  /// --quiet: no progress and no list of written files (errors still).
  bool quiet = false;
  bool color = false;
};

/// Removes every `-Xptxas VALUE` and `-Xptxas=VALUE` (also spelled
/// `--Xptxas`) from `arguments`, appending VALUE's comma-separated flags to
/// `flags`, as nvcc reads them. Returns a message when one lacks its value.
std::optional<std::string> takePtxasFlags(std::vector<std::string> &arguments,
                                          std::vector<std::string> &flags);

/// Compiles the kernels of one module (pipeline::buildModule) and shows
/// diagnostics, progress and the files written. Returns the exit status:
/// 0; 1 when anything failed; 2 for a module name Python cannot import.
int runBuild(const BuildOptions &options);

} // namespace kiln::driver
