//===- driver/build_command.h - `kiln build` --------------------*- C++ -*-===//
#pragma once

#include "cache/cache_location.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::driver {

enum class EmitKind { Typed, LLVM, Ptx, Cubin, Fatbin, Object, Module };

struct BuildOptions {
  std::string file;
  std::string moduleName;
  std::vector<std::string> signatures;
  EmitKind emit = EmitKind::Fatbin;
  /// --emit module: the Python whose EXT_SUFFIX names the module (empty:
  /// python3 on $PATH), unless `extensionSuffix` is given.
  std::string python;
  std::optional<std::string> extensionSuffix;
  std::string outputDirectory = ".";
  /// --depfile: where to write the files read, for build systems
  /// (driver/depfile.h); empty for none.
  std::string depfile;
  std::optional<std::string> arch;
  /// Parallel jobs; 0 for one per core.
  unsigned jobs = 0;
  bool verbose = false;
  /// --quiet: no progress and no list of written files (errors still).
  bool quiet = false;
  bool color = false;
  /// --cache-dir, --no-cache, --max-size.
  cache::CacheFlags cache;

  // Overrides of the decorators' options, for every kernel.
  bool fastmath = false;
  bool debug = false;
  bool lineinfo = false;
  std::optional<unsigned> opt;
  std::optional<unsigned> maxRegisters;
  std::vector<std::string> ptxasFlags;
};

/// Removes every `-Xptxas VALUE` and `-Xptxas=VALUE` (also spelled
/// `--Xptxas`) from `arguments`, appending VALUE's comma-separated flags to
/// `flags`, as nvcc reads them. Returns a message when one lacks its value.
std::optional<std::string> takePtxasFlags(std::vector<std::string> &arguments,
                                          std::vector<std::string> &flags);

/// Compiles the kernels of one module and writes one file per
/// specialization (and architecture, where the form has one), or, for
/// EmitKind::Module, one Python extension module. Returns the exit status:
/// 0, or 1 when anything failed.
int runBuild(const BuildOptions &options);

} // namespace kiln::driver
