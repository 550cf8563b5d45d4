//===- driver/cache_command.h - `kiln cache ...` ----------------*- C++ -*-===//
#pragma once

#include "cache/cache_location.h"

#include <optional>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

enum class CacheAction { Stats, List, Prune, Clear, Limit, Verify, Export, Import };

struct CacheCommandOptions {
  CacheAction action = CacheAction::Stats;
  cache::CacheFlags flags;
  bool json = false;
  /// verify --repair.
  bool repair = false;
  /// prune --older-than.
  std::optional<std::string> olderThan;
  /// limit SIZE.
  std::optional<std::string> newLimit;
  /// export / import.
  std::string file;
  /// export --sign-with: a key name or a key file.
  std::optional<std::string> signWith;
  /// export --unsigned.
  bool unsignedExport = false;
  /// import --trusted-keys.
  std::optional<std::string> trustedKeys;
  /// import --insecure-skip-signature.
  bool skipSignature = false;
};

/// Runs one `kiln cache` subcommand; returns the exit status.
int runCacheCommand(const CacheCommandOptions &options);

/// Declares `kiln cache` and its options on `app`; parsing fills `cacheOptions`.
CLI::App *addCacheCommand(CLI::App &app, CacheCommandOptions &cacheOptions);

} // namespace kiln::driver
