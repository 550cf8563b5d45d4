//===- driver/build_command.h - `kiln build` --------------------*- C++ -*-===//
#pragma once

#include "pipeline/build_options.h"

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

using pipeline::EmitKind;

/// What to build (pipeline::BuildOptions), and how the command shows it.
struct BuildOptions : pipeline::BuildOptions {
  bool verbose = false;
  /// --quiet: no progress and no list of written files (errors still).
  bool quiet = false;
  /// --json: print the result as JSON on stdout instead of the files written.
  bool json = false;
  bool color = false;
  /// Whether --emit and -o were given: without them a module that imports
  /// kiln builds its companion beside itself, and any other module needs
  /// --module.
  bool emitGiven = false;
  bool outputGiven = false;
  /// Whether -j, --[no-]fastmath, --[no-]lineinfo and
  /// --[no-]switchable-index-checks were given: those given override
  /// pyproject.toml's settings.
  bool jobsGiven = false;
  bool fastmathGiven = false;
  bool lineinfoGiven = false;
  bool switchableIndexChecksGiven = false;
};

/// Removes every `-Xptxas VALUE` and `-Xptxas=VALUE` (also spelled
/// `--Xptxas`) from `arguments`, appending VALUE's comma-separated flags to
/// `flags`, as nvcc reads them. Returns a message when one lacks its value.
std::optional<std::string> takePtxasFlags(std::vector<std::string> &arguments,
                                          std::vector<std::string> &flags);

/// Compiles the kernels of one module (pipeline::buildModule) and shows
/// diagnostics, progress and the files written. A module that imports kiln
/// stays Python (FrontendOptions::moduleStaysPython). Returns the exit
/// status: 0; 1 when anything failed; 2 for a module name Python cannot
/// import or a kernel module built without --emit or --module.
int runBuild(BuildOptions options);

/// Declares `kiln build` and its options on `app`; parsing fills `build`.
CLI::App *addBuildCommand(CLI::App &app, BuildOptions &build);

} // namespace kiln::driver
